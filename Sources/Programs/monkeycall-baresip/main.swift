import BaresipCommand

// The bridge alone, for a build: the package installs it as a name of the `monkeycall` program.
BaresipProgram.main()
