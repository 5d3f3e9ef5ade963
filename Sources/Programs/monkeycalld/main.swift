import MonkeyCallDaemon

// The daemon alone, for a build: the package installs it as a name of the `monkeycall` program.
DaemonProgram.main()
