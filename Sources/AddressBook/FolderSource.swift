import Dispatch
import FoundationEssentials
import Logging
import QueueExecutor
#if canImport(Glibc)
import Glibc
#endif

/// vCard folders (`$XDG_DATA_HOME/kpeoplevcard`, a vdir kept by vdirsyncer or khard):
/// every `*.vcf` under each root, at any depth, read at start and followed with inotify.
///
/// inotify's descriptor is a `DispatchSource` read source on the address book's queue: the
/// kernel wakes the process only when a file changes, never on a timer. A root that does not
/// exist yet is waited for by watching its nearest existing ancestor for its creation.
/// Each file is a source of its own (`vcf:/path`): a change re-reads the whole file and
/// replaces what it gave; a deleted file (or folder) removes what it gave.
actor FolderSource {
    private let roots: [String]
    private let context: ContactSourceContext

    nonisolated var unownedExecutor: UnownedSerialExecutor { context.executor.asUnownedSerialExecutor() }

    private var fd: Int32 = -1
    private var source: DispatchSourceRead?
    /// Watched folders by watch descriptor, and the reverse.
    private var folders: [Int32: String] = [:]
    private var watches: [String: Int32] = [:]
    /// Ancestors watched for a missing root to appear: descriptor → roots waiting on it.
    private var waiting: [Int32: Set<String>] = [:]
    /// The files that gave contacts (or errors), to remove when their folder goes: as their
    /// sources' names (`vcf:/path`), the very strings the index keeps, so a path is stored once.
    private var files: Set<String> = []

    /// Largest file read: a vCard with photos is big, an address book's worth of them bigger;
    /// past this the file is skipped and logged.
    static let maximumFileSize = 64 << 20

    init(roots: [String], context: ContactSourceContext) {
        self.roots = roots.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        self.context = context
    }

    func start() {
        guard fd < 0 else { return }
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            context.logger.warning("contacts: inotify is not available (\(String(cString: strerror(errno)))): vCard folders are read once, not followed")
            var changes: [ContactChange] = []
            for root in roots { scan(root, into: &changes) }
            context.apply(changes)
            return
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: context.executor.queue)
        source.setEventHandler { [weak self] in self?.assumeIsolated { $0.readEvents() } }
        let descriptor = fd
        source.setCancelHandler { close(descriptor) }
        source.resume()
        self.source = source
        var changes: [ContactChange] = []
        for root in roots { attach(root, into: &changes) }
        context.apply(changes)
        for root in roots { context.report(.sourceReady("vcf:" + root)) }
    }

    func stop() {
        source?.cancel()
        source = nil
        fd = -1
        folders = [:]
        watches = [:]
        waiting = [:]
    }

    // MARK: Watching

    private static let folderMask = UInt32(IN_CREATE | IN_DELETE | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO
        | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)
    private static let ancestorMask = UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    /// Reads a root and follows it, or waits for it to appear.
    private func attach(_ root: String, into changes: inout [ContactChange]) {
        while true {
            if isFolder(root) {
                scan(root, into: &changes)
                return
            }
            // The nearest existing ancestor is watched for the next component's creation.
            let ancestor = nearestExistingAncestor(of: root)
            let wd = inotify_add_watch(fd, ancestor, Self.ancestorMask | UInt32(IN_MASK_ADD))
            guard wd >= 0 else {
                // The ancestor went between the look and the watch (`rm -r` of the folders above
                // the root): look again from what is left, rather than stop following the root.
                if errno == ENOENT || errno == ENOTDIR { continue }
                context.logger.warning("contacts: cannot watch \(ancestor) for \(root) to appear: \(String(cString: strerror(errno)))")
                return
            }
            // Made between the look and the watch (mkdir -p): look again rather than miss it.
            if !isFolder(root), nearestExistingAncestor(of: root) == ancestor {
                waiting[wd, default: []].insert(root)
                return
            }
            if waiting[wd] == nil, folders[wd] == nil { inotify_rm_watch(fd, wd) }
        }
    }

    private func nearestExistingAncestor(of path: String) -> String {
        var ancestor = URL(fileURLWithPath: path).deletingLastPathComponent().path
        while !isFolder(ancestor), ancestor != "/" { ancestor = URL(fileURLWithPath: ancestor).deletingLastPathComponent().path }
        return ancestor
    }

    /// Watches `folder` and everything under it, and reads every vCard file in it.
    private func scan(_ folder: String, into changes: inout [ContactChange]) {
        // Watched again even when the path is watched already: a folder removed and made again
        // at once is another inode, whose events the old watch never sees. The same folder gives
        // the same descriptor; another one means the old folder is gone: what it gave goes (and
        // its watches, with the events still queued for them), and the listing below reads again.
        if fd >= 0 {
            let wd = inotify_add_watch(fd, folder, Self.folderMask)
            if wd >= 0 {
                if let old = watches[folder], old != wd { forget(folder, into: &changes) }
                folders[wd] = folder
                watches[folder] = wd
            } else if (errno == ENOENT || errno == ENOTDIR) && roots.contains(folder) {
                // The root went between the look and the watch: wait for it again.
                forget(folder, into: &changes)
                attach(folder, into: &changes)
                return
            } else if errno != ENOENT && errno != ENOTDIR {
                // A folder below a root that went meanwhile is told by its parent's events.
                context.logger.warning("contacts: cannot watch \(folder): \(String(cString: strerror(errno)))")
            }
        }
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for entry in entries.sorted() {
            let path = folder + "/" + entry
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            let kind = info.st_mode & S_IFMT
            if kind == S_IFDIR {
                scan(path, into: &changes)
            } else if kind == S_IFREG || kind == S_IFLNK, Self.isCard(entry) {
                read(path, into: &changes)
            }
        }
    }

    private static func isCard(_ name: String) -> Bool {
        !name.hasPrefix(".") && (name.hasSuffix(".vcf") || name.hasSuffix(".vcard") || name.hasSuffix(".VCF"))
    }

    private func isFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// The file's bytes (at most `maximumFileSize` + 1), read with open and read: Foundation's
    /// FileHandle would bring its own code pages into the idle daemon for the same result.
    private static func contents(of path: String) -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        let limit = maximumFileSize + 1
        var data = Data(count: min(max(Int(info.st_size), 0), limit))
        var filled = 0
        while true {
            if filled == data.count {
                guard data.count < limit else { break }
                data.count = min(max(data.count * 2, 4096), limit) // Grown since the stat.
            }
            let count = data.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        data.count = filled
        return data
    }

    /// Re-reads one file: what it gave before is replaced in the same batch.
    private func read(_ path: String, into changes: inout [ContactChange]) {
        // The name already kept when the file was read before: the index keeps that one string.
        let source = files.insert("vcf:" + path).memberAfterInsert
        changes.append(.removeSource(source))
        guard let data = Self.contents(of: path) else { return }
        guard data.count <= Self.maximumFileSize else {
            problem("\(path): larger than \(Self.maximumFileSize >> 20) MiB, skipped")
            return
        }
        let (cards, errors) = VCardParser.parse(data, file: path)
        for error in errors { problem("\(error.description) (card skipped)") }
        for (position, card) in cards.enumerated() {
            let phones = card.telephones.indices.compactMap { index -> ContactPhone? in
                let written = card.telephones[index]
                guard let e164 = context.numbering.e164(written) else { return nil }
                return ContactPhone(label: index < card.telephoneLabels.count ? card.telephoneLabels[index] : "", number: written, e164: e164)
            }
            guard let name = card.name, !phones.isEmpty else { continue }
            changes.append(.set(ContactKey(source: source, uid: String(position)), name: name, phones: phones))
        }
    }

    private func problem(_ text: String) {
        context.logger.warning("contacts: \(text)")
        context.report(.problem(text))
    }

    /// Everything under `folder` is gone (deleted or moved away).
    private func forget(_ folder: String, into changes: inout [ContactChange]) {
        let prefix = "vcf:" + folder + "/"
        for file in files where file.hasPrefix(prefix) {
            changes.append(.removeSource(file))
            files.remove(file)
        }
        let folderPrefix = folder + "/"
        for (path, wd) in watches where path == folder || path.hasPrefix(folderPrefix) {
            inotify_rm_watch(fd, wd) // An IN_IGNORED follows; already ignored if it was deleted.
            watches[path] = nil
            folders[wd] = nil
        }
    }

    // MARK: Events

    private func readEvents() {
        var changes: [ContactChange] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var overflow = false
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let (wd, mask, length): (Int32, UInt32, Int) = buffer.withUnsafeBytes { raw in
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (event.wd, event.mask, Int(event.len))
                }
                let nameStart = offset + MemoryLayout<inotify_event>.size
                let nameBytes = buffer[nameStart..<min(nameStart + length, count)].prefix { $0 != 0 }
                let name = String(decoding: nameBytes, as: UTF8.self)
                offset = nameStart + length
                if mask & UInt32(IN_Q_OVERFLOW) != 0 { overflow = true; continue }
                handle(wd: wd, mask: mask, name: name, into: &changes)
            }
        }
        if overflow {
            // Events were lost: everything is read again (each file replaces what it gave).
            context.logger.notice("contacts: inotify queue overflowed; reading the vCard folders again")
            changes.append(contentsOf: files.map { .removeSource($0) })
            files = []
            for root in roots { attach(root, into: &changes) }
        }
        context.apply(changes)
    }

    private func handle(wd: Int32, mask: UInt32, name: String, into changes: inout [ContactChange]) {
        if mask & UInt32(IN_IGNORED) != 0 {
            // The kernel dropped the watch. After our own inotify_rm_watch the descriptor is out of
            // our tables already; still in them, the folder went without an IN_DELETE_SELF seen here
            // (its file system unmounted, or a watch added to a folder as it was being removed):
            // it is gone, and a root is waited for again, as are the roots an ancestor watched for.
            if let folder = folders[wd] {
                forget(folder, into: &changes)
                if roots.contains(folder) { attach(folder, into: &changes) }
            }
            for root in waiting.removeValue(forKey: wd) ?? [] { attach(root, into: &changes) }
            return
        }
        if let roots = waiting.removeValue(forKey: wd) {
            // An ancestor of a missing root: something appeared (or the ancestor went); try again.
            if folders[wd] == nil { inotify_rm_watch(fd, wd) }
            for root in roots { attach(root, into: &changes) }
        }
        guard let folder = folders[wd] else { return }
        if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
            forget(folder, into: &changes)
            if roots.contains(folder) { attach(folder, into: &changes) } // Wait for it to come back.
            return
        }
        let path = folder + "/" + name
        let isDirectory = mask & UInt32(IN_ISDIR) != 0
        if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
            if isDirectory {
                forget(path, into: &changes)
            } else if let file = files.remove("vcf:" + path) {
                changes.append(.removeSource(file))
            }
        } else if isDirectory, mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
            scan(path, into: &changes) // Files written before the watch was in place are read here.
        } else if !isDirectory, mask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO) != 0, Self.isCard(name) {
            read(path, into: &changes)
        }
    }
}
