import Foundation
import ProcessSpawn

/// The translations of this checkout (`po/*.po`), compiled by the real `msgfmt` once per test
/// process into a folder of their own, laid out as under `share/locale`. Programs the tests start
/// find them through `MONKEYCALL_LOCALE_DIR` (`PrivateBus.environment`).
public enum Catalogs {
    /// The source folder `po/`, found from this file's place in the checkout.
    public static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("po")

    /// The compiled catalogs' folder; empty of catalogs (English everywhere) when `msgfmt` failed,
    /// which the language tests then report.
    public static let directory: String = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("monkeycall-locale-\(getpid())")
        RemovedAtExit.add(folder.path)
        let languages = ((try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? [])
            .filter { $0.hasSuffix(".po") }.map { String($0.dropLast(3)) }
        for language in languages {
            let target = folder.appendingPathComponent("\(language)/LC_MESSAGES")
            try? FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
            _ = run(["/usr/bin/msgfmt", "--check", "-o", target.appendingPathComponent("monkeycall.mo").path,
                     sources.appendingPathComponent("\(language).po").path])
        }
        // "pseudo": every message of the template as itself in ⟦ ⟧, so that a test sees at a glance
        // which text on screen did not come through gettext (LANGUAGE=pseudo).
        let pseudo = folder.appendingPathComponent("\(pseudoLanguage)/LC_MESSAGES")
        try? FileManager.default.createDirectory(at: pseudo, withIntermediateDirectories: true)
        let english = folder.appendingPathComponent("english.po").path, bracketed = folder.appendingPathComponent("pseudo.po").path
        _ = run(["/usr/bin/msgen", "--output-file=\(english)", sources.appendingPathComponent("monkeycall.pot").path])
            && run(["/usr/bin/msgfilter", "--keep-header", "--input=\(english)", "--output-file=\(bracketed)", "sed", "-e", "s/^/⟦/", "-e", "s/$/⟧/"])
            && run(["/usr/bin/msgfmt", "-o", pseudo.appendingPathComponent("monkeycall.mo").path, bracketed])
        return folder.path
    }()

    /// The catalog of ⟦bracketed⟧ English: `LANGUAGE=pseudo` (with a locale that is not C).
    public static let pseudoLanguage = "pseudo"

    /// Runs a program to its end; whether it succeeded. Waited for with waitpid: Foundation's
    /// Process notices an exit only on a run loop.
    private static func run(_ argv: [String]) -> Bool {
        guard case .success(let pid) = Spawn.start(argv, environment: ProcessInfo.processInfo.environment, files: []) else { return false }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status == 0
    }
}
