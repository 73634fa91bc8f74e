// lab-go-output prints what a grading's `go test -json` run showed, readable, for the agent's next try: the tail
// of go's own messages (build errors, ERRCAP bytes), a line with the runner's exit status, then the tail of the
// tests' output (TEXTCAP bytes): each "output" and "build-output" event's Output, in order, and any line that is
// not such a JSON event as it is. It decides nothing: the verdict is the host's, from the JSON (rules/reports.py).
//
//	lab-go-output STATUS ERRFILE JSONFILE
//
// check.sh runs it as the tester, on files the tester wrote: it reads only regular files, and opens them without
// waiting (a FIFO left in a file's place is skipped, not waited on). Built into the grader image at image build
// (templates/images/grader/go.dockerfile): a Go program starts in about a millisecond, python3 in 10 to 15.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"syscall"
)

const (
	errCap  = 100_000
	textCap = 200_000
)

// open opens path for reading only when it is a regular file, without blocking on a FIFO.
func open(path string) *os.File {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "lab-go-output: cannot open %s: %v\n", path, err)
		return nil
	}
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		fmt.Fprintf(os.Stderr, "lab-go-output: %s is not a regular file\n", path)
		return nil
	}
	return os.NewFile(uintptr(fd), path)
}

// tail writes the last n bytes of the file at path to w.
func tail(w io.Writer, path string, n int64) {
	f := open(path)
	if f == nil {
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		f.Seek(-n, io.SeekEnd)
	}
	io.Copy(w, io.LimitReader(f, n))
}

// text returns the last textCap bytes of the readable output of the go test -json events in the file at path.
func text(path string) []byte {
	f := open(path)
	if f == nil {
		return nil
	}
	defer f.Close()
	var out []byte
	r := bufio.NewReaderSize(f, 64*1024)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var event struct {
				Action string
				Output *string
			}
			if json.Unmarshal(line, &event) != nil {
				out = append(out, line...)
			} else if event.Action == "output" || event.Action == "build-output" {
				if event.Output != nil {
					out = append(out, *event.Output...)
				} else {
					out = append(out, line...)
				}
			}
			if len(out) > 2*textCap {
				out = append([]byte(nil), out[len(out)-textCap:]...)
			}
		}
		if err != nil {
			break
		}
	}
	if len(out) > textCap {
		out = out[len(out)-textCap:]
	}
	return out
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: lab-go-output STATUS ERRFILE JSONFILE")
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	tail(w, os.Args[2], errCap)
	fmt.Fprintf(w, "go test exited with %s\n", os.Args[1])
	w.Write(text(os.Args[3]))
}
