package daemon

// RequestExit makes Wait return as the "exit" command does; for daemons
// that end on their own, such as ovsdb-server --run when its command
// ends. Repeated requests are harmless.
func (d *Daemon) RequestExit() { d.requestExit() }
