package command

import "syscall"

// setDeathSignal has the kernel kill the program when the server's thread
// that started it dies, as it does when the server is killed.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
