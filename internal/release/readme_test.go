package release

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// block is one fenced code block of a Markdown file.
type block struct {
	lang, text string
	line       int
}

func fences(t *testing.T, path string) []block {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []block
	var cur *block
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &block{lang: strings.TrimPrefix(trimmed, "```"), line: n}
		case cur != nil && trimmed == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: unclosed code block", path, cur.line)
	}
	return out
}

// repoRoot is the repository's root, where README.md and .ci/run are.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("the go command is needed to check the README:", err)
	}
	return root
}

// TestReadmeGoCompiles: every Go program in the README compiles against
// the module as it is.
func TestReadmeGoCompiles(t *testing.T) {
	root := repoRoot(t)
	dir, err := os.MkdirTemp(root, ".readme-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var pkgs []string
	for _, b := range fences(t, filepath.Join(root, "README.md")) {
		if b.lang != "go" {
			continue
		}
		if !strings.HasPrefix(b.text, "package main\n") && !strings.Contains(b.text, "\npackage main\n") {
			t.Errorf("README.md:%d: a Go block is not a whole program (package main)", b.line)
			continue
		}
		pkg := filepath.Join(dir, fmt.Sprintf("line%d", b.line))
		if err := os.Mkdir(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "main.go"), []byte(b.text), 0o644); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, "./"+filepath.Join(filepath.Base(dir), filepath.Base(pkg)))
	}
	if len(pkgs) == 0 {
		t.Fatal("README.md has no Go program")
	}
	cmd := exec.Command("go", append([]string{"vet"}, pkgs...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet of the README's programs (named after their first line): %v\n%s", err, out)
	}
	t.Logf("%d programs compile", len(pkgs))
}

// TestReadmeCommands: every shell command in the README is run, here or
// by .ci/run. Servers are started, asked for /health, and stopped;
// benchmarks run one iteration; other programs run to completion.
func TestReadmeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the README's commands")
	}
	root := repoRoot(t)
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range fences(t, filepath.Join(root, "README.md")) {
		if b.lang != "sh" {
			continue
		}
		lines := strings.Split(strings.ReplaceAll(strings.TrimSpace(b.text), "\\\n", " "), "\n")
		for i, line := range lines {
			line = strings.TrimSpace(line)
			if c, _, _ := strings.Cut(line, "#"); strings.TrimSpace(c) == "" {
				continue
			}
			line = strings.TrimSpace(strings.SplitN(line, " #", 2)[0])
			at := fmt.Sprintf("README.md:%d", b.line+1+i)
			n++
			args := strings.Fields(line)
			switch {
			case line == "go test ./...":
				// .ci/run runs it with -json, for the list of skipped tests.
				if !bytes.Contains(ci, []byte("\ngo test ./... ")) && !bytes.Contains(ci, []byte("\ngo test -json ./... ")) {
					t.Errorf("%s: .ci/run does not run %q", at, line)
				}
			case len(args) > 2 && args[0] == "go" && args[1] == "test" && strings.Contains(line, "-bench"):
				run(t, at, root, append(args, "-benchtime", "1x", "-run", "^$"), time.Minute)
			case len(args) > 2 && args[0] == "go" && args[1] == "run" && args[2] == "./examples/server":
				serve(t, at, root, args)
			case len(args) > 2 && args[0] == "go" && args[1] == "run":
				run(t, at, root, args, 2*time.Minute)
			default:
				t.Errorf("%s: no test runs %q: teach TestReadmeCommands to run it", at, line)
			}
		}
	}
	if n == 0 {
		t.Fatal("README.md has no shell command")
	}
}

func run(t *testing.T, at, dir string, args []string, limit time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: %s: %v\n%s", at, strings.Join(args, " "), err, out)
	}
}

// serve starts the README's server command, waits for its /health, and
// stops it with SIGINT, as a user would with ^C.
func serve(t *testing.T, at, dir string, args []string) {
	t.Helper()
	addr := "127.0.0.1:8080"
	for i, a := range args {
		if a == "-addr" && i+1 < len(args) {
			addr = args[i+1]
		}
	}
	if l, err := net.Listen("tcp", addr); err != nil {
		t.Fatalf("%s: %s is taken, so the README's server cannot be checked: %v", at, addr, err)
	} else {
		l.Close()
	}
	// go run builds the server first: its binary, run directly, is the
	// process that gets the signal.
	bin := filepath.Join(t.TempDir(), "server")
	build := exec.Command("go", "build", "-o", bin, args[2])
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: building %s: %v\n%s", at, args[2], err, out)
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, args[3:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &out
	cmd.Env = append(os.Environ(), "NEURO_API_KEYS=sk-readme")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(90 * time.Second)
	healthy := false
	for !healthy && time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("%s: %s exited before serving: %v\n%s", at, strings.Join(args, " "), err, out.String())
		case <-time.After(200 * time.Millisecond):
		}
		resp, err := http.Get("http://" + addr + "/health")
		if err == nil {
			healthy = resp.StatusCode == http.StatusOK
			resp.Body.Close()
		}
	}
	if !healthy {
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s: %s did not answer /health on %s within 90 s\n%s", at, strings.Join(args, " "), addr, out.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: %s exited with %v after SIGINT\n%s", at, strings.Join(args, " "), err, out.String())
		}
	case <-time.After(40 * time.Second):
		cmd.Process.Kill()
		t.Errorf("%s: %s did not stop within 40 s of SIGINT", at, strings.Join(args, " "))
	}
}
