package main

// The message session and the path of a job through it, as a listener sees it.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/actions/scaleset"
	"github.com/google/uuid"
)

func (c *conformance) openSession(ctx context.Context) error {
	session, err := c.client.MessageSessionClient(ctx, c.scaleSet.ID, "conformance-host")
	if err != nil {
		return err
	}
	c.session = session
	s := session.Session()
	if s.SessionID == uuid.Nil || s.Statistics == nil || s.RunnerScaleSet == nil ||
		s.RunnerScaleSet.ID != c.scaleSet.ID || s.MessageQueueURL == "" || s.MessageQueueAccessToken == "" ||
		s.OwnerName != "conformance-host" {
		return fmt.Errorf("session: %+v", s)
	}
	return nil
}

func (c *conformance) sessionConflict(ctx context.Context) error {
	second, err := c.client.MessageSessionClient(ctx, c.scaleSet.ID, "another-host")
	if err == nil {
		_ = second.Close(ctx)
		return errors.New("a second session was opened")
	}
	for _, want := range []string{"409", "RunnerScaleSetSessionConflictException", "activity_id="} {
		if !strings.Contains(err.Error(), want) {
			return fmt.Errorf("conflict error lacks %q: %v", want, err)
		}
	}
	return nil
}

func (c *conformance) longPollIdle(ctx context.Context) error {
	start := time.Now()
	msg, err := c.session.GetMessage(ctx, c.lastMsgID, 10)
	if err != nil {
		return err
	}
	if msg != nil {
		return fmt.Errorf("a message while idle: %+v", msg)
	}
	if time.Since(start) < time.Second {
		return fmt.Errorf("the poll was not held (%v)", time.Since(start))
	}
	return nil
}

// next polls until a message arrives and acknowledges it, as the listener does.
func (c *conformance) next(ctx context.Context, capacity int) (*scaleset.RunnerScaleSetMessage, error) {
	for {
		msg, err := c.session.GetMessage(ctx, c.lastMsgID, capacity)
		if err != nil {
			return nil, err
		}
		if msg == nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		c.lastMsgID = msg.MessageID
		if msg.Statistics == nil {
			return nil, errors.New("a message without statistics")
		}
		return msg, c.session.DeleteMessage(ctx, msg.MessageID)
	}
}

func (c *conformance) longPollJob(ctx context.Context) error {
	got := make(chan *scaleset.RunnerScaleSetMessage, 1)
	failed := make(chan error, 1)
	go func() {
		msg, err := c.next(ctx, 10)
		if err != nil {
			failed <- err
			return
		}
		got <- msg
	}()
	ids, err := c.sim.addJobs(1, -1)
	if err != nil {
		return err
	}
	c.jobID = ids[0]
	var msg *scaleset.RunnerScaleSetMessage
	select {
	case msg = <-got:
	case err := <-failed:
		return err
	}
	if len(msg.JobAvailableMessages) != 1 {
		return fmt.Errorf("expected one JobAvailable: %+v", msg)
	}
	j := msg.JobAvailableMessages[0]
	if j.RunnerRequestID != c.jobID || j.OwnerName != org || j.RepositoryName != "app" || j.AcquireJobURL == "" ||
		len(j.RequestLabels) != 1 || j.RequestLabels[0] != setLabel || j.WorkflowRunID == 0 {
		return fmt.Errorf("JobAvailable: %+v", j)
	}
	if _, err := uuid.Parse(j.JobID); err != nil {
		return fmt.Errorf("jobId %q is not GitHub's UUID: %v", j.JobID, err)
	}
	if j.QueueTime.IsZero() || time.Since(j.QueueTime) > time.Minute || !j.ScaleSetAssignTime.IsZero() {
		return fmt.Errorf("JobAvailable times: queue %v, scale set assign %v", j.QueueTime, j.ScaleSetAssignTime)
	}
	if msg.Statistics.TotalAvailableJobs != 1 {
		return fmt.Errorf("statistics: %+v", msg.Statistics)
	}
	c.times = j.JobMessageBase
	return nil
}

func (c *conformance) acquire(ctx context.Context) error {
	acquired, err := c.session.AcquireJobs(ctx, []int64{c.jobID})
	if err != nil {
		return err
	}
	if len(acquired) != 1 || acquired[0] != c.jobID {
		return fmt.Errorf("acquired %v", acquired)
	}
	msg, err := c.next(ctx, 10)
	if err != nil {
		return err
	}
	if len(msg.JobAssignedMessages) != 1 || msg.JobAssignedMessages[0].RunnerRequestID != c.jobID {
		return fmt.Errorf("expected JobAssigned: %+v", msg)
	}
	j := msg.JobAssignedMessages[0]
	if j.ScaleSetAssignTime.Before(c.times.QueueTime) || !j.QueueTime.Equal(c.times.QueueTime) || j.JobID != c.times.JobID {
		return fmt.Errorf("JobAssigned times/ids: %+v after %+v", j.JobMessageBase, c.times)
	}
	if msg.Statistics.TotalAssignedJobs != 1 || msg.Statistics.TotalAcquiredJobs != 1 {
		return fmt.Errorf("statistics: %+v", msg.Statistics)
	}
	c.times = j.JobMessageBase
	return nil
}

func (c *conformance) jitConfig(ctx context.Context) error {
	jit, err := c.client.GenerateJitRunnerConfig(ctx, &scaleset.RunnerScaleSetJitRunnerSetting{Name: "conformance-runner-1"}, c.scaleSet.ID)
	if err != nil {
		return err
	}
	if jit.Runner == nil || jit.Runner.ID == 0 || jit.Runner.Name != "conformance-runner-1" ||
		jit.Runner.RunnerScaleSetID != c.scaleSet.ID || jit.EncodedJITConfig == "" {
		return fmt.Errorf("JIT config: %+v", jit)
	}
	c.runner = jit.Runner
	_, err = c.client.GenerateJitRunnerConfig(ctx, &scaleset.RunnerScaleSetJitRunnerSetting{Name: "conformance-runner-1"}, c.scaleSet.ID)
	if !errors.Is(err, scaleset.RunnerExistsError) {
		return fmt.Errorf("a second JIT runner of the same name: %v", err)
	}
	byName, err := c.client.GetRunnerByName(ctx, "conformance-runner-1")
	if err != nil || byName == nil || byName.ID != jit.Runner.ID {
		return fmt.Errorf("runner by name: %+v, %v", byName, err)
	}
	byID, err := c.client.GetRunner(ctx, jit.Runner.ID)
	if err != nil || byID.Name != "conformance-runner-1" {
		return fmt.Errorf("runner by id: %+v, %v", byID, err)
	}
	return nil
}

func (c *conformance) jobStarts(ctx context.Context) error {
	if err := c.sim.control("POST", "/_sim/runners/"+c.runner.Name+"/online", "", nil); err != nil {
		return err
	}
	msg, err := c.next(ctx, 10)
	if err != nil {
		return err
	}
	if len(msg.JobStartedMessages) != 1 {
		return fmt.Errorf("expected JobStarted: %+v", msg)
	}
	j := msg.JobStartedMessages[0]
	if j.RunnerName != c.runner.Name || j.RunnerID != c.runner.ID || j.RunnerRequestID != c.jobID {
		return fmt.Errorf("JobStarted: %+v", j)
	}
	if j.RunnerAssignTime.Before(c.times.ScaleSetAssignTime) || !j.ScaleSetAssignTime.Equal(c.times.ScaleSetAssignTime) {
		return fmt.Errorf("JobStarted times: %+v after %+v", j.JobMessageBase, c.times)
	}
	if msg.Statistics.TotalRunningJobs != 1 || msg.Statistics.TotalBusyRunners != 1 {
		return fmt.Errorf("statistics: %+v", msg.Statistics)
	}
	c.times = j.JobMessageBase
	return nil
}

func (c *conformance) removeBusy(ctx context.Context) error {
	err := c.client.RemoveRunner(ctx, int64(c.runner.ID))
	if !errors.Is(err, scaleset.JobStillRunningError) {
		return fmt.Errorf("removing a busy runner: %v", err)
	}
	return nil
}

func (c *conformance) jobCompletes(ctx context.Context) error {
	if err := c.sim.control("POST", fmt.Sprintf("/_sim/jobs/%d/complete", c.jobID), `{"result":"succeeded"}`, nil); err != nil {
		return err
	}
	msg, err := c.next(ctx, 10)
	if err != nil {
		return err
	}
	if len(msg.JobCompletedMessages) != 1 {
		return fmt.Errorf("expected JobCompleted: %+v", msg)
	}
	j := msg.JobCompletedMessages[0]
	if j.Result != "succeeded" || j.RunnerName != c.runner.Name || j.RunnerID != c.runner.ID {
		return fmt.Errorf("JobCompleted: %+v", j)
	}
	if j.FinishTime.Before(j.RunnerAssignTime) || !j.RunnerAssignTime.Equal(c.times.RunnerAssignTime) ||
		!j.QueueTime.Equal(c.times.QueueTime) || !j.ScaleSetAssignTime.Equal(c.times.ScaleSetAssignTime) {
		return fmt.Errorf("JobCompleted times: %+v after %+v", j.JobMessageBase, c.times)
	}
	if msg.Statistics.TotalAssignedJobs != 0 || msg.Statistics.TotalRegisteredRunners != 0 {
		return fmt.Errorf("statistics: %+v", msg.Statistics)
	}
	return nil
}

// GitHub unregisters a JIT runner after its job: GET finds no agent, and a
// removal (what actions-runner-controller sends after every job) succeeds.
func (c *conformance) removeAfterJob(ctx context.Context) error {
	if _, err := c.client.GetRunner(ctx, c.runner.ID); !errors.Is(err, scaleset.RunnerNotFoundError) {
		return fmt.Errorf("GET of a runner after its job: %v", err)
	}
	if err := c.client.RemoveRunner(ctx, int64(c.runner.ID)); err != nil {
		return fmt.Errorf("removing a runner after its job: %v", err)
	}
	return nil
}

func (c *conformance) removeIdle(ctx context.Context) error {
	jit, err := c.client.GenerateJitRunnerConfig(ctx, &scaleset.RunnerScaleSetJitRunnerSetting{Name: "conformance-idle"}, c.scaleSet.ID)
	if err != nil {
		return err
	}
	if err := c.client.RemoveRunner(ctx, int64(jit.Runner.ID)); err != nil {
		return err
	}
	if _, err := c.client.GetRunner(ctx, jit.Runner.ID); !errors.Is(err, scaleset.RunnerNotFoundError) {
		return fmt.Errorf("GET of a removed runner: %v", err)
	}
	if err := c.client.RemoveRunner(ctx, 987654); !errors.Is(err, scaleset.RunnerNotFoundError) {
		return fmt.Errorf("removing a runner that never existed: %v", err)
	}
	return nil
}

// With capacity 1 only one of three jobs is handed out; the next follows
// once the first is done. (GitHub does not publish its rule; README.md of
// test/simulator says what the simulator does.)
func (c *conformance) maxCapacity(ctx context.Context) error {
	// The capacity a listener announces holds from its poll on.
	if idle, err := c.session.GetMessage(ctx, c.lastMsgID, 1); err != nil || idle != nil {
		return fmt.Errorf("an idle poll: %+v, %v", idle, err)
	}
	ids, err := c.sim.addJobs(3, 300)
	if err != nil {
		return err
	}
	msg, err := c.next(ctx, 1)
	if err != nil {
		return err
	}
	if len(msg.JobAvailableMessages) != 1 || msg.JobAvailableMessages[0].RunnerRequestID != ids[0] {
		return fmt.Errorf("capacity 1: expected the first job alone: %+v", msg.JobAvailableMessages)
	}
	if idle, err := c.session.GetMessage(ctx, c.lastMsgID, 1); err != nil || idle != nil {
		return fmt.Errorf("capacity 1 with one job out: %+v, %v", idle, err)
	}
	if _, err := c.session.AcquireJobs(ctx, []int64{ids[0]}); err != nil {
		return err
	}
	jit, err := c.client.GenerateJitRunnerConfig(ctx, &scaleset.RunnerScaleSetJitRunnerSetting{Name: "conformance-capacity"}, c.scaleSet.ID)
	if err != nil {
		return err
	}
	if err := c.sim.control("POST", "/_sim/runners/"+jit.Runner.Name+"/online", "", nil); err != nil {
		return err
	}
	completed := false
	for {
		msg, err := c.next(ctx, 1)
		if err != nil {
			return err
		}
		for _, done := range msg.JobCompletedMessages {
			completed = completed || done.RunnerRequestID == ids[0]
		}
		for _, j := range msg.JobAvailableMessages {
			if j.RunnerRequestID != ids[1] || !completed {
				return fmt.Errorf("job %d handed out (first done: %v)", j.RunnerRequestID, completed)
			}
			// Acquired as a listener would; the listener step runs it and the third.
			c.pending = ids[1:]
			_, err := c.session.AcquireJobs(ctx, []int64{ids[1]})
			return err
		}
	}
}
