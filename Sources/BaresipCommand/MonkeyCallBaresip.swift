import ArgumentParser
import BaresipBridge
import Dispatch
import FoundationEssentials
import Glibc
import MonkeyCallAPI
import MonkeyCallKit
import ScreenText
import Synchronization

/// baresip as a MonkeyCall provider: SIP calls ring, are answered, held, muted
/// and hung up from the desktop and the `monkeycall` CLI, and `sip:` links dial.
/// The bridge's program: `monkeycall-baresip`, or the `monkeycall` program started by that name.
public enum BaresipProgram {
    public static func main() { MonkeyCallBaresip.main() }
}

struct MonkeyCallBaresip: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monkeycall-baresip",
        abstract: "Bridges the baresip SIP softphone to MonkeyCall.",
        discussion: """
            Either attach to a running baresip (--control HOST:PORT, its ctrl_tcp module), or give
            your account (--account, --password-file): then monkeycall-baresip writes a baresip
            configuration under $XDG_CONFIG_HOME/monkeycall/baresip/, runs baresip and stops it on exit.
            """,
        version: Release.description(of: "monkeycall-baresip"))

    @Option(help: "Attach to a running baresip's ctrl_tcp at HOST:PORT instead of starting one.")
    var control: String?

    @Option(help: "Your SIP account: 'sip:alice@example.org' or '\"Alice\" <sip:alice@example.org>', optionally with baresip account parameters (;regint=0).")
    var account: String?

    @Option(help: "A file holding the account's password (only its first line is read).")
    var passwordFile: String?

    @Option(help: "The desktop-file id shown with the calls' notifications.")
    var desktopEntry: String?

    @Option(help: "The name MonkeyCall shows (default: the account's display name, else \"SIP\").")
    var name: String?

    @Option(help: "Where baresip listens for SIP (sip_listen), e.g. 0.0.0.0:5060.")
    var sipListen: String?

    @Option(help: "The network interface or address baresip uses for SIP and media (net_interface).")
    var netInterface: String?

    @Flag(help: "No sound card: baresip sends a tone and plays nowhere (for tests and servers).")
    var headlessAudio = false

    @Option(help: "Seconds baresip has to come back after the control connection drops, before its calls end as failed.")
    var reconnectGrace: Double = 1.5

    @Option(help: "Bus address (default: the session bus).")
    var address: String?

    func validate() throws {
        if control == nil && account == nil {
            throw ValidationError("give --account 'sip:you@example.org' (and --password-file) to run baresip, or --control HOST:PORT to attach to a running one")
        }
        if control != nil && (passwordFile != nil || sipListen != nil || netInterface != nil || headlessAudio) {
            throw ValidationError("--password-file, --sip-listen, --net-interface and --headless-audio configure a baresip this program starts: they do nothing with --control")
        }
    }

    /// Synchronous, with the main thread parked in `dispatchMain()`: no task of ours runs on Swift
    /// concurrency's global executor (MonkeyCallKit's run on its own), so the idle bridge never
    /// starts libdispatch's once-a-second worker-pool monitor.
    func run() throws {
        let sipAccount: SIPAccount?
        do {
            sipAccount = try account.map(SIPAccount.init)
        } catch {
            throw ValidationError("\(error)")
        }
        let baresip: BaresipProcess?
        let controlAddress: ControlAddress
        if let control {
            do { controlAddress = try ControlAddress(control) } catch { throw ValidationError("\(error)") }
            baresip = nil
        } else if let sipAccount {
            controlAddress = ControlAddress(host: "127.0.0.1", port: try BaresipProcess.freeLoopbackPort())
            var configuration = BaresipConfiguration(account: sipAccount, password: try readPassword(), control: controlAddress)
            configuration.sipListen = sipListen
            configuration.netInterface = netInterface
            configuration.headlessAudio = headlessAudio
            let directory = BaresipConfiguration.defaultDirectory
            try configuration.write(to: directory)
            // A baresip of our own that stops is a failure: exit, and let the service manager restart us.
            let process = try BaresipProcess(directory: directory) { status in
                Log.say("baresip exited (status \(status)); stopping.")
                Glibc.exit(1)
            }
            Log.say("Started baresip (pid \(process.pid)) with \(directory.path).")
            baresip = process
        } else {
            preconditionFailure("validate() requires --control or --account")
        }

        let configuration = CXProviderConfiguration(localizedName: name ?? sipAccount?.displayName ?? "SIP")
        configuration.urlSchemes = ["sip", "sips"]
        configuration.supportedHandleTypes = [.generic, .phoneNumber]
        configuration.supportsVideo = false
        configuration.maximumCallGroups = 2
        configuration.maximumCallsPerCallGroup = 1
        configuration.desktopEntry = desktopEntry
        let bridge = Bridge(configuration: configuration, control: controlAddress, account: sipAccount, busAddress: address,
                            reconnectGrace: reconnectGrace, log: Log.say)
        bridge.start()

        // SIGTERM, SIGINT: leave MonkeyCall and stop our baresip before exiting.
        let signals = DispatchQueue(label: "monkeycall-baresip.signals")
        let sources = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: signals)
            source.setEventHandler {
                Log.say("Stopping (signal \(number)).")
                bridge.stop()
                baresip?.stop()
                Glibc.exit(0)
            }
            source.resume()
            return source
        }
        withExtendedLifetime(sources) { dispatchMain() }
    }

    private func readPassword() throws -> String? {
        guard let passwordFile else { return nil }
        guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
            throw ValidationError("cannot read the password file \(passwordFile)")
        }
        return text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
    }
}

/// The bridge's log: one sentence a line on standard output, at once.
enum Log {
    private static let lock = Mutex(())

    @Sendable static func say(_ text: String) {
        lock.withLock { _ in
            StandardStream.output.write(text + "\n")
        }
    }
}
