package envtest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is a process as /proc shows it, enough to find what a control
// plane left running and to end it.
type Process struct {
	PID  int
	PPID int
	// PGID is its process group; the processes of a control plane each
	// lead a group of their own.
	PGID int
	// Name is the executable's name, cut to 15 characters
	// ("kube-controller").
	Name string
	// start is the start time in clock ticks after boot; with PID it
	// identifies the process even after its PID is reused.
	start uint64
	// state is R, S, D, Z (ended, not waited for) and so on.
	state string
}

func (p Process) String() string {
	return fmt.Sprintf("%s (pid %d)", p.Name, p.PID)
}

// Children lists the live processes whose parent is pid.
func Children(pid int) ([]Process, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("failed to list processes: %w", err)
	}
	var out []Process
	for _, entry := range entries {
		id, err := strconv.Atoi(entry.Name())
		if err != nil {
			continue
		}
		p, err := readProcess(id)
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue // ended while listing
		}
		if err != nil {
			return nil, err
		}
		if p.PPID == pid && p.Alive() {
			out = append(out, p)
		}
	}
	return out, nil
}

// Descendants lists the live processes below pid: its children, theirs, and
// so on.
func Descendants(pid int) ([]Process, error) {
	var out []Process
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		children, err := Children(queue[0])
		if err != nil {
			return nil, err
		}
		for _, c := range children {
			out = append(out, c)
			queue = append(queue, c.PID)
		}
	}
	return out, nil
}

// Alive reports whether the process still runs: its PID is not reused and
// it is not a zombie waiting for its parent.
func (p Process) Alive() bool {
	now, err := readProcess(p.PID)
	return err == nil && now.start == p.start && now.state != zombieState
}

// Kill sends SIGKILL to the process and, when it leads a process group, to
// the whole group, so that what it started goes too.
func (p Process) Kill() error {
	target := p.PID
	if p.PGID == p.PID {
		target = -p.PID
	}
	if err := syscall.Kill(target, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("failed to kill %s: %w", p, err)
	}
	return nil
}

// UID returns the real user ID the process runs with, as seen from this
// process's user namespace.
func (p Process) UID() (int, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.PID), "status"))
	if err != nil {
		return 0, fmt.Errorf("failed to read the status of %s: %w", p, err)
	}
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			if fields := strings.Fields(rest); len(fields) > 0 {
				return strconv.Atoi(fields[0])
			}
		}
	}
	return 0, fmt.Errorf("no Uid line in the status of %s", p)
}

// zombieState marks a process that has ended but was not waited for.
const zombieState = "Z"

// clockTicks is the unit of the times in /proc/<pid>/stat: USER_HZ, 100
// per second on every Linux architecture (the kernel's ABI to user space,
// whatever its internal HZ).
const clockTicks = 100

// CPUTime returns the CPU time the process has used so far, in user and
// kernel mode (utime + stime, fields 14 and 15 of /proc/<pid>/stat), not
// counting its children.
func CPUTime(pid int) (time.Duration, error) {
	_, fields, err := readStat(pid)
	if err != nil {
		return 0, err
	}
	var ticks uint64
	for _, n := range []int{14, 15} {
		v, err := strconv.ParseUint(fields[n-3], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("failed to parse field %d of /proc/%d/stat: %w", n, pid, err)
		}
		ticks += v
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// readStat reads /proc/<pid>/stat, "pid (comm) state ppid pgrp ...", into
// the command name and the fields after it, from field 3 (state) on, so
// that field n is fields[n-3]. comm may hold spaces and parentheses, so the
// fields are found from its last ")".
func readStat(pid int) (string, []string, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", nil, err
	}
	open, end := bytes.IndexByte(raw, '('), bytes.LastIndexByte(raw, ')')
	if open < 0 || end < open {
		return "", nil, fmt.Errorf("failed to parse /proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(raw[end+1:]))
	if len(fields) < 20 {
		return "", nil, fmt.Errorf("failed to parse /proc/%d/stat: %d fields", pid, len(fields)+2)
	}
	return string(raw[open+1 : end]), fields, nil
}

// readProcess parses /proc/<pid>/stat, with the start time as the 22nd
// field.
func readProcess(pid int) (Process, error) {
	name, fields, err := readStat(pid)
	if err != nil {
		return Process{}, err
	}
	p := Process{PID: pid, Name: name, state: fields[0]}
	for i, dst := range map[int]*int{4: &p.PPID, 5: &p.PGID} {
		if *dst, err = strconv.Atoi(fields[i-3]); err != nil {
			return Process{}, fmt.Errorf("failed to parse field %d of /proc/%d/stat: %w", i, pid, err)
		}
	}
	if p.start, err = strconv.ParseUint(fields[22-3], 10, 64); err != nil {
		return Process{}, fmt.Errorf("failed to parse the start time in /proc/%d/stat: %w", pid, err)
	}
	return p, nil
}

// Memory returns a size field of /proc/<pid>/status (VmRSS, VmHWM ...) in
// bytes.
func Memory(pid int, name string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), name+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", name, pid)
}
