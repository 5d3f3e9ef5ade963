import Dispatch
import FoundationEssentials
import Glibc
import Logging
import QueueExecutor

/// What the address book tells its owner, on the address book's own queue.
public enum AddressBookEvent: Sendable, Hashable {
    /// The index changed; lookups already answer from this snapshot.
    case changed(ContactSnapshot)
    /// A source's initial contents are in the index (`vcf:<root>`, `eds:<ESource UID>`).
    case sourceReady(String)
    /// evolution-data-server's registry appeared on the bus (true) or went, or the helper ended (false).
    case evolutionDataServer(running: Bool)
    /// Something could not be read: a damaged card (with its file and line), an address book EDS could not open.
    case problem(String)
}

extension ContactSnapshot: Hashable {
    public static func == (a: ContactSnapshot, b: ContactSnapshot) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// The user's address book: vCard folders and GNOME's address books, indexed in memory from
/// E.164 numbers to names, as iOS names CallKit calls from Contacts.
///
/// ```swift
/// let book = AddressBook(configuration: .standard(contactFolders: options.contacts), logger: logger)
/// book.start()                              // returns at once; indexing happens on the book's queue
/// book.name(forHandle: "+44 20 7946 0000")  // from any thread, never waits on indexing or EDS
/// ```
/// Reading happens on a utility-QoS queue of its own; `start` returns at once, and until a
/// source has been read its contacts are simply not there (no name, never a late ring).
public final class AddressBook: Sendable {
    public struct Configuration: Sendable {
        /// Folders of vCard files, followed recursively.
        public var folders: [String]
        /// The `monkeycall-contacts` helper, or nil not to read GNOME's address books.
        public var edsHelper: String?
        /// The environment the helper runs in (its session bus, its locale).
        public var helperEnvironment: [String: String]
        /// How national numbers are read (the locale's country).
        public var numbering: ContactNumbering
        /// The pauses before the helper is started again after it ended.
        public var helperRestarts: HelperRestarts

        public init(folders: [String], edsHelper: String?, helperEnvironment: [String: String] = ProcessInfo.processInfo.environment,
                    numbering: ContactNumbering = .fromEnvironment(), helperRestarts: HelperRestarts = .standard) {
            self.folders = folders
            self.edsHelper = edsHelper
            self.helperEnvironment = helperEnvironment
            self.numbering = numbering
            self.helperRestarts = helperRestarts
        }

        /// KPeople's vCard store (`$XDG_DATA_HOME/kpeoplevcard`), the given folders (`monkeycalld --contacts`),
        /// and GNOME's address books when evolution-data-server is installed and the helper is found.
        public static func standard(contactFolders: [String] = [],
                                    environment: [String: String] = ProcessInfo.processInfo.environment) -> Configuration {
            let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? (environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path) + "/.local/share"
            let helper = EDSSource.isInstalled(environment: environment) ? helperPath() : nil
            return Configuration(folders: [dataHome + "/kpeoplevcard"] + contactFolders, edsHelper: helper,
                                 helperEnvironment: environment, numbering: .fromEnvironment(environment))
        }

        /// `monkeycall-contacts` next to the running executable (a build folder, `/usr/bin` next to
        /// `/usr/libexec`… see the candidates), or nil.
        public static func helperPath() -> String? {
            let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
            let folder = URL(fileURLWithPath: executable).deletingLastPathComponent().path
            let candidates = [
                folder + "/monkeycall-contacts",
                URL(fileURLWithPath: folder).deletingLastPathComponent().path + "/libexec/monkeycall/monkeycall-contacts",
                "/usr/libexec/monkeycall/monkeycall-contacts",
            ]
            return candidates.first { access($0, X_OK) == 0 }
        }
    }

    public let configuration: Configuration
    private let index: ContactIndex
    private let queue: DispatchQueue
    private let folderSource: FolderSource
    private let edsSource: EDSSource?

    /// `onEvent` is called on the address book's queue, in order.
    public init(configuration: Configuration, logger: Logger, onEvent: @escaping @Sendable (AddressBookEvent) -> Void = { _ in }) {
        self.configuration = configuration
        let index = ContactIndex()
        let queue = DispatchQueue(label: "monkeycall.addressbook", qos: .utility)
        self.index = index
        self.queue = queue
        let executor = QueueExecutor(queue: queue)
        let apply: @Sendable ([ContactChange]) -> Void = { changes in
            if let snapshot = index.apply(changes) { onEvent(.changed(snapshot)) }
        }
        let context = ContactSourceContext(executor: executor, numbering: configuration.numbering, logger: logger, apply: apply, report: onEvent)
        folderSource = FolderSource(roots: configuration.folders, context: context)
        edsSource = configuration.edsHelper.map {
            EDSSource(helper: $0, environment: configuration.helperEnvironment, restarts: configuration.helperRestarts, context: context)
        }
    }

    /// Starts reading, in the background: returns at once.
    public func start() {
        queue.async { [folderSource, edsSource] in
            folderSource.assumeIsolated { $0.start() }
            edsSource?.assumeIsolated { $0.start() }
        }
    }

    /// Stops following the sources (the helper exits); the index keeps what it has.
    public func stop() {
        queue.sync { [folderSource, edsSource] in
            folderSource.assumeIsolated { $0.stop() }
            edsSource?.assumeIsolated { $0.stop() }
        }
    }

    /// The current snapshot: for many lookups in a row, or to hand to another thread.
    public var snapshot: ContactSnapshot { index.snapshot }

    /// The contact's name for an E.164 number (`PhoneNumber.normalize`'s form).
    public func name(for number: Int64) -> String? { index.lookup(number) }

    /// The contact's name for a phone handle as a caller gives it (`+44 20 7946 0000`,
    /// `tel:…`, or a national `020 7946 0000` read in the locale's country); nil for any other handle.
    public func name(forHandle handle: String) -> String? {
        configuration.numbering.e164(handle).flatMap { index.lookup($0) }
    }
}

/// When the `monkeycall-contacts` helper is started again after it ended by itself: after a pause
/// of `first` seconds, doubled at each end up to `longest`; a helper that ran `settled` seconds
/// before it ended starts the pauses over. A helper that cannot load its libraries (libebook
/// missing) is not started again on a timer at all, but when its file changes.
public struct HelperRestarts: Sendable, Equatable {
    public var first: Double
    public var longest: Double
    public var settled: Double

    public init(first: Double = 1, longest: Double = 60, settled: Double = 60) {
        self.first = first
        self.longest = longest
        self.settled = settled
    }

    /// 1 s, doubling up to a minute; a minute's run starts them over.
    public static let standard = HelperRestarts()
}

/// What the address book gives each of its sources: the executor their state is on (the book's
/// queue), how numbers are read, where the log goes, how changes reach the index, and how the
/// book's owner hears of them.
struct ContactSourceContext: Sendable {
    let executor: QueueExecutor
    let numbering: ContactNumbering
    let logger: Logger
    let apply: @Sendable ([ContactChange]) -> Void
    let report: @Sendable (AddressBookEvent) -> Void
}
