package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// simulator is the github-simulator process, on a free port it reports.
type simulator struct {
	cmd  *exec.Cmd
	base string
	http *http.Client
}

func startSimulator(path string, args ...string) (*simulator, error) {
	cmd := exec.Command(path, append([]string{"--port", "0"}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &simulator{cmd: cmd, http: &http.Client{Timeout: 30 * time.Second}}
	found := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if base, ok := strings.CutPrefix(lines.Text(), "listening on "); ok {
				found <- base
			}
		}
		close(found)
	}()
	select {
	case base, ok := <-found:
		if !ok {
			s.stop()
			return nil, fmt.Errorf("%s exited before it listened", path)
		}
		s.base = base
		return s, nil
	case <-time.After(30 * time.Second):
		s.stop()
		return nil, fmt.Errorf("%s did not report its address within 30 s", path)
	}
}

func (s *simulator) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// control calls the simulator's control API (/_sim/...), decoding the answer into out.
func (s *simulator) control(method, path, body string, out any) error {
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	if err := jsonBody(resp, out); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

// rest calls GitHub's REST API on the simulator with the PAT.
func (s *simulator) rest(method, path string, out any) (http.Header, error) {
	req, err := http.NewRequest(method, s.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+pat)
	req.Header.Set("Accept", "application/vnd.github+json")
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	return resp.Header, jsonBody(resp, out)
}

func (s *simulator) calls() (map[string]int64, error) {
	calls := map[string]int64{}
	return calls, s.control("GET", "/_sim/calls", "", &calls)
}

// addJobs queues jobs for the conformance scale set; durationMs < 0: until completed by hand.
func (s *simulator) addJobs(count, durationMs int) ([]int64, error) {
	body, _ := json.Marshal(map[string]any{"repository": repo, "labels": []string{setLabel},
		"duration_ms": durationMs, "count": count})
	var out struct {
		IDs []int64 `json:"ids"`
	}
	if err := s.control("POST", "/_sim/jobs", string(body), &out); err != nil {
		return nil, err
	}
	if len(out.IDs) != count {
		return nil, fmt.Errorf("asked for %d jobs, got %v", count, out.IDs)
	}
	return out.IDs, nil
}
