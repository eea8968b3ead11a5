package tee

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
)

// procGroupHelper runs the helper modes of the process-group tests.
func procGroupHelper(mode string) (int, bool) {
	switch mode {
	case "watchdog": // the tee's watchdog (Config.Watchdog)
		pgid, _ := strconv.Atoi(os.Getenv("TEE_PGID"))
		return Watchdog(pgid, os.Stdin), true
	case "stubborn": // a grandchild: ignores SIGTERM and its stdin, holds nothing of the agent's stdio
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
		select {}
	case "grandparent": // starts a stubborn child, says "ready <child pid>", exits 42 on SIGTERM
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		child := exec.Command(selfExe())
		child.Env = append(os.Environ(), "TEE_HELPER=stubborn")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1, true
		}
		fmt.Printf("ready %d\n", child.Process.Pid)
		<-c
		return 42, true
	}
	return 0, false
}
