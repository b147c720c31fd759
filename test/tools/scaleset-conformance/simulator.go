package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// simulator is the github-simulator process, on a free port it reports in
// its --endpoints-file (written whole once it listens).
type simulator struct {
	cmd  *exec.Cmd
	base string
	http *http.Client
	dir  string        // holds the endpoints file
	done chan struct{} // closed once the process has exited and been reaped
}

func startSimulator(path string, args ...string) (*simulator, error) {
	dir, err := os.MkdirTemp("", "scaleset-conformance-sim")
	if err != nil {
		return nil, err
	}
	endpoints := filepath.Join(dir, "endpoints.json")
	cmd := exec.Command(path, append([]string{"--port", "0", "--endpoints-file", endpoints}, args...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &simulator{cmd: cmd, http: &http.Client{Timeout: 30 * time.Second}, dir: dir, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()
	// A file offers no event to wait on: poll it (eventually) until it names
	// the address, the process exits or 30 s pass.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	err = eventually(ctx, func() error {
		text, err := os.ReadFile(endpoints)
		if err != nil {
			return err
		}
		var listening struct {
			BaseURL string `json:"baseURL"`
		}
		if err := json.Unmarshal(text, &listening); err != nil || listening.BaseURL == "" {
			return fmt.Errorf("%s holds no baseURL: %q", endpoints, text)
		}
		s.base = listening.BaseURL
		return nil
	})
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("%s did not report its address in %s: %w", path, endpoints, err)
	}
	return s, nil
}

func (s *simulator) stop() {
	defer os.RemoveAll(s.dir)
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
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
