package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/actions/scaleset"
	"github.com/actions/scaleset/listener"
)

func newListener(session *scaleset.MessageSessionClient, scaleSetID, maxRunners int) (*listener.Listener, error) {
	return listener.New(session, listener.Config{
		ScaleSetID: scaleSetID,
		MaxRunners: maxRunners,
		Logger:     slog.New(slog.DiscardHandler),
	})
}

// scaler is the smallest listener.Scaler that runs jobs: as many JIT runners
// as jobs are assigned (up to the listener's max), each brought online on the
// simulator (as a runner process would connect), forgotten once its job ends.
// It stops the listener when every wanted job has completed.
type scaler struct {
	c    *conformance
	ctx  context.Context
	want map[int64]bool
	done context.CancelFunc

	mu        sync.Mutex
	live      map[string]bool
	next      int
	peak      int
	completed int
	err       error
}

func (s *scaler) HandleDesiredRunnerCount(ctx context.Context, count int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live == nil {
		s.live = map[string]bool{}
	}
	target := min(count, 2)
	for len(s.live) < target {
		s.next++
		name := fmt.Sprintf("conformance-listener-%d", s.next)
		jit, err := s.c.client.GenerateJitRunnerConfig(ctx, &scaleset.RunnerScaleSetJitRunnerSetting{Name: name}, s.c.scaleSet.ID)
		if err != nil {
			return len(s.live), err
		}
		if jit.EncodedJITConfig == "" {
			return len(s.live), fmt.Errorf("JIT config for %s is empty", name)
		}
		if err := s.c.sim.control("POST", "/_sim/runners/"+name+"/online", "", nil); err != nil {
			return len(s.live), err
		}
		s.live[name] = true
		s.peak = max(s.peak, len(s.live))
	}
	return len(s.live), nil
}

func (s *scaler) HandleJobStarted(ctx context.Context, job *scaleset.JobStarted) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.live[job.RunnerName] {
		s.err = fmt.Errorf("job %d started on %q, a runner this scaler did not start", job.RunnerRequestID, job.RunnerName)
	}
	return nil
}

func (s *scaler) HandleJobCompleted(ctx context.Context, job *scaleset.JobCompleted) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, job.RunnerName)
	if !s.want[job.RunnerRequestID] {
		return nil
	}
	switch {
	case job.Result != "succeeded":
		s.err = fmt.Errorf("job %d: result %q", job.RunnerRequestID, job.Result)
	case job.QueueTime.IsZero() || job.ScaleSetAssignTime.Before(job.QueueTime) ||
		job.RunnerAssignTime.Before(job.ScaleSetAssignTime) || job.FinishTime.Before(job.RunnerAssignTime):
		s.err = fmt.Errorf("job %d: times out of order: %+v", job.RunnerRequestID, job.JobMessageBase)
	}
	delete(s.want, job.RunnerRequestID)
	s.completed++
	if len(s.want) == 0 || s.err != nil {
		s.done()
	}
	return nil
}
