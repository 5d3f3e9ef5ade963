import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Whether the session's sound server can be there at all, from where its clients look for it:
/// `PULSE_SERVER`, else `$XDG_RUNTIME_DIR/pulse/native` (PulseAudio's socket, which PipeWire's pulse
/// server and systemd's socket activation also make). Asked before each attempt to open a sound
/// context: opening one with no server loads libcanberra's pulse module and PulseAudio's client
/// library with it (dlopen, some 1.4 million instructions) only to fail, at every ring of every
/// call. A `stat` of a socket that is not there costs nothing, and a server that starts later is
/// found at the next ring all the same. The variables are read with getenv: Foundation's
/// `ProcessInfo.environment` builds the whole environment anew at each read (700,000 instructions).
public enum SoundServerSocket {
    /// False only when every place a client would connect to is a local socket that does not
    /// exist; true when any might answer (a TCP server, an abstract name, nothing known).
    public static func mayAnswer(environment variable: (String) -> String? = { getenv($0).map { String(cString: $0) } }) -> Bool {
        if let servers = variable("PULSE_SERVER"), !servers.isEmpty {
            return servers.split(separator: " ").contains { server in
                // "{machine-id}unix:/path", "unix:/path", "/path", "tcp:host:port", "host".
                var address = Substring(server)
                if address.hasPrefix("{"), let end = address.firstIndex(of: "}") { address = address[address.index(after: end)...] }
                if address.hasPrefix("unix:") { address = address.dropFirst(5) }
                guard address.hasPrefix("/") else { return true }
                return exists(String(address))
            }
        }
        guard let runtime = variable("XDG_RUNTIME_DIR"), !runtime.isEmpty else { return true }
        return exists(runtime + "/pulse/native")
    }

    private static func exists(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0
    }
}
