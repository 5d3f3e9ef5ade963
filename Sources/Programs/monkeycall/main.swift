import BaresipCommand
import MonkeyCallCLI
import MonkeyCallDaemon

// One program, three names: the daemon, the CLI and the SIP bridge share one copy of the Swift
// runtime and FoundationEssentials (13.5 MB a program) where three programs carried three (issue
// 44). The name it was started by picks which; the package installs monkeycalld and
// monkeycall-baresip as links to it. The Phone app stays apart, so that the daemon never loads GTK.
switch CommandLine.arguments.first?.split(separator: "/").last {
case "monkeycalld": DaemonProgram.main()
case "monkeycall-baresip": BaresipProgram.main()
default: CLIProgram.main()
}
