package main

// Token expiry and renewal, the client's listener end to end, reassignment,
// and the deletions that end a scale set's life.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/actions/scaleset"
)

func (c *conformance) queueTokenExpiry(ctx context.Context) error {
	before, err := c.sim.calls()
	if err != nil {
		return err
	}
	if err := c.sim.control("POST", "/_sim/expire-tokens", "", nil); err != nil {
		return err
	}
	token := c.session.Session().MessageQueueAccessToken
	if _, err := c.session.GetMessage(ctx, c.lastMsgID, 0); err != nil {
		return err
	}
	after, err := c.sim.calls()
	if err != nil {
		return err
	}
	if after["scaleset.refresh_session"] != before["scaleset.refresh_session"]+1 ||
		c.session.Session().MessageQueueAccessToken == token {
		return fmt.Errorf("no session refresh: %v -> %v", before, after)
	}
	return nil
}

// eventually calls f every 100 ms until it returns nil or ctx ends.
func eventually(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *conformance) registrations() (int64, error) {
	calls, err := c.sim.calls()
	return calls["rest.runner_registration"], err
}

func (c *conformance) adminTokenRefresh(ctx context.Context) error {
	before, err := c.registrations()
	if err != nil {
		return err
	}
	deadline, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return eventually(deadline, func() error {
		if _, err := c.client.GetRunnerScaleSetByID(ctx, c.scaleSet.ID); err != nil {
			return err
		}
		now, err := c.registrations()
		if err != nil {
			return err
		}
		if now == before {
			return errors.New("not registered again yet")
		}
		return nil
	})
}

// The service refuses a revoked admin token; scaleset v0.4.0 reports the 401
// (it renews only by the token's exp) and the next call after the renewal
// margin works again.
func (c *conformance) adminTokenRevoked(ctx context.Context) error {
	if err := c.sim.control("POST", "/_sim/expire-tokens", `{"admin":true}`, nil); err != nil {
		return err
	}
	_, err := c.client.GetRunnerScaleSetByID(ctx, c.scaleSet.ID)
	if err == nil || !strings.Contains(err.Error(), "401") {
		return fmt.Errorf("a revoked admin token: %v", err)
	}
	deadline, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return eventually(deadline, func() error {
		_, err := c.client.GetRunnerScaleSetByID(ctx, c.scaleSet.ID)
		return err
	})
}

// listenerEndToEnd runs the client's own listener loop (the one ARC runs)
// with a scaler that starts JIT runners the simulator brings online, until
// every job left over from the capacity step and three more are done.
func (c *conformance) listenerEndToEnd(ctx context.Context) error {
	more, err := c.sim.addJobs(3, 200)
	if err != nil {
		return err
	}
	want := map[int64]bool{}
	for _, id := range append(append([]int64{}, c.pending...), more...) {
		want[id] = true
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	s := &scaler{c: c, ctx: runCtx, want: want, done: stop}
	l, err := newListener(c.session, c.scaleSet.ID, 2)
	if err != nil {
		return err
	}
	err = l.Run(runCtx, s)
	if ctx.Err() != nil {
		return fmt.Errorf("timed out with %d of %d jobs completed: %v", s.completed, len(want), err)
	}
	if s.err != nil {
		return s.err
	}
	if !errors.Is(err, context.Canceled) {
		return fmt.Errorf("listener: %v", err)
	}
	if s.peak > 2 {
		return fmt.Errorf("%d runners at once for max 2", s.peak)
	}
	return nil
}

func (c *conformance) deleteSession(ctx context.Context) error {
	if err := c.session.Close(ctx); err != nil {
		return err
	}
	again, err := c.client.MessageSessionClient(ctx, c.scaleSet.ID, "conformance-host-2")
	if err != nil {
		return fmt.Errorf("no new session after the delete: %v", err)
	}
	return again.Close(ctx)
}

func (c *conformance) deleteScaleSet(ctx context.Context) error {
	if err := c.client.DeleteRunnerScaleSet(ctx, c.scaleSet.ID); err != nil {
		return err
	}
	_, err := c.client.GetRunnerScaleSetByID(ctx, c.scaleSet.ID)
	if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "RunnerScaleSetNotFoundException") {
		return fmt.Errorf("a deleted scale set: %v", err)
	}
	byName, err := c.client.GetRunnerScaleSet(ctx, 1, setName)
	if err != nil || byName != nil {
		return fmt.Errorf("a deleted scale set by name: %+v, %v", byName, err)
	}
	return nil
}

// jsonBody decodes a response into out (if given) after checking the status.
func jsonBody(resp *http.Response, out any) error {
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", resp.Status, body)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(body, out)
}

// GitHub's reassignment (the client's README, "Job Reassignment"): an
// assignment no runner takes in time ends with a JobCompleted "canceled" and
// the job is offered again. The simulator's clock skips the timeout.
func (c *conformance) reassignment(ctx context.Context) error {
	ids, err := c.sim.addJobs(1, -1)
	if err != nil {
		return err
	}
	id := ids[0]
	// Messages the listener step left unread come first.
	until := func(found func(*scaleset.RunnerScaleSetMessage) bool) (*scaleset.RunnerScaleSetMessage, error) {
		for {
			msg, err := c.next(ctx, 10)
			if err != nil || found(msg) {
				return msg, err
			}
		}
	}
	offered := func(msg *scaleset.RunnerScaleSetMessage) bool {
		for _, j := range msg.JobAvailableMessages {
			if j.RunnerRequestID == id {
				return true
			}
		}
		return false
	}
	assign := func() error {
		if _, err := until(offered); err != nil {
			return err
		}
		if acquired, err := c.session.AcquireJobs(ctx, []int64{id}); err != nil || len(acquired) != 1 {
			return fmt.Errorf("acquired %v: %v", acquired, err)
		}
		_, err := until(func(msg *scaleset.RunnerScaleSetMessage) bool {
			return len(msg.JobAssignedMessages) == 1 && msg.JobAssignedMessages[0].RunnerRequestID == id
		})
		return err
	}
	if err := assign(); err != nil {
		return err
	}
	if err := c.sim.control("POST", "/_sim/clock", fmt.Sprintf(`{"advance_ms":%d}`, assignmentTimeoutMs), nil); err != nil {
		return err
	}
	msg, err := c.next(ctx, 10)
	if err != nil {
		return err
	}
	if len(msg.JobCompletedMessages) != 1 || msg.JobCompletedMessages[0].RunnerRequestID != id ||
		msg.JobCompletedMessages[0].Result != "canceled" || msg.JobCompletedMessages[0].RunnerName != "" || !offered(msg) {
		return fmt.Errorf("expected JobCompleted canceled and JobAvailable again: %+v", msg)
	}
	if msg.Statistics.TotalAssignedJobs != 0 || msg.Statistics.TotalAvailableJobs != 1 {
		return fmt.Errorf("statistics: %+v", msg.Statistics)
	}
	// Offered again, it is acquired again (the admin token the skip outlived is renewed on the way).
	if acquired, err := c.session.AcquireJobs(ctx, []int64{id}); err != nil || len(acquired) != 1 {
		return fmt.Errorf("acquired again %v: %v", acquired, err)
	}
	if _, err := until(func(msg *scaleset.RunnerScaleSetMessage) bool {
		return len(msg.JobAssignedMessages) == 1 && msg.JobAssignedMessages[0].RunnerRequestID == id
	}); err != nil {
		return err
	}
	var state struct {
		Jobs []struct {
			ID       int64 `json:"id"`
			Requeues int   `json:"requeues"`
		} `json:"jobs"`
	}
	if err := c.sim.control("GET", "/_sim/state", "", &state); err != nil {
		return err
	}
	for _, j := range state.Jobs {
		if j.ID == id && j.Requeues != 1 {
			return fmt.Errorf("requeues %d, want 1", j.Requeues)
		}
	}
	return c.sim.control("POST", fmt.Sprintf("/_sim/jobs/%d/cancel", id), "", nil)
}
