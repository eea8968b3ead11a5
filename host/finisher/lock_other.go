//go:build !unix

package finisher

import (
	"os"
	"syscall"
)

func tryLock(*os.File) (bool, error) { return false, ErrUnsupported }

func detach() *syscall.SysProcAttr { return nil }
