// swift-tools-version: 6.0
import PackageDescription

let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
let serviceLifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let grdb = Target.Dependency.product(name: "GRDB", package: "GRDB.swift")
let heap = Target.Dependency.product(name: "HeapModule", package: "swift-collections")
let orderedCollections = Target.Dependency.product(name: "OrderedCollections", package: "swift-collections")

let package = Package(
    name: "MonkeyCall",
    products: [
        .executable(name: "monkeycalld", targets: ["monkeycalld"]),
        .executable(name: "monkeycall", targets: ["monkeycall"]),
        .executable(name: "monkeycall-bench", targets: ["monkeycall-bench"]),
        .executable(name: "monkeycall-demo", targets: ["monkeycall-demo"]),
        .executable(name: "monkeycall-baresip", targets: ["monkeycall-baresip"]),
        .executable(name: "monkeycall-fuzz", targets: ["monkeycall-fuzz"]),
        .executable(name: "monkeycall-contacts", targets: ["monkeycall-contacts"]),
        .executable(name: "monkeycall-phone", targets: ["monkeycall-phone"]),
        .executable(name: "monkeycall-phone-baseline", targets: ["monkeycall-phone-baseline"]),
        .library(name: "DBus", targets: ["DBus"]),
        // QueueExecutor too: the `SerialTaskExecutor` an app gives its tasks to stay quiet when idle.
        .library(name: "MonkeyCallKit", targets: ["MonkeyCallKit", "QueueExecutor"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        // C shims: the system libraries, found through pkg-config.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CLibnotify", pkgConfig: "libnotify", providers: [.apt(["libnotify-dev"])]),
        .systemLibrary(name: "CGLib", pkgConfig: "glib-2.0", providers: [.apt(["libglib2.0-dev"])]),
        .systemLibrary(name: "CCanberra", pkgConfig: "libcanberra", providers: [.apt(["libcanberra-dev"])]),
        // One GLib main loop on a thread of its own, for libnotify, GSettings and libcanberra.
        .target(name: "GLibLoop", dependencies: ["CBoundary", "CGLib"]),
        // The ringtone: a looped sound through libcanberra, knowing nothing of D-Bus or calls.
        .target(name: "Ringtone", dependencies: ["CCanberra", "GLibLoop", "BoundedFile", logging]),
        // evolution-data-server's client library, for monkeycall-contacts only (never linked into the daemon).
        .systemLibrary(name: "CEBook", pkgConfig: "libebook-1.2", providers: [.apt(["libebook1.2-dev"])]),
        // glibc's malloc.h (mallopt), which Swift's Glibc module leaves out.
        .target(name: "CMalloc"),
        // Linux's timerfd, for the switchboard's one timer (DispatchClock).
        .target(name: "CTimerFD"),

        // Files read whole with read(2), bounded and without blocking: /proc entries, and files
        // another program may have put in place (a desktop file, a ringtone).
        .target(name: "BoundedFile"),
        // A D-Bus library that knows nothing of telephony.
        .target(name: "DBus", dependencies: ["CBoundary", "CDBus", "BoundedFile"]),
        // The one wrapper for what the compiler cannot check at the C boundary (`UncheckedSendable`). No dependencies.
        .target(name: "CBoundary"),
        // A serial executor over a dispatch queue, for actors that keep their state on a queue, and
        // a serial task executor, for programs that stay quiet when idle (`SerialTaskExecutor`).
        .target(name: "QueueExecutor"),
        // posix_spawn with a clean start, for the daemon's helper and the tests' children.
        .systemLibrary(name: "CSpawn"),
        .target(name: "ProcessSpawn", dependencies: ["CSpawn"]),
        // A private dbus-daemon and process helpers for tests and the benchmark.
        .target(name: "DBusTestSupport", dependencies: ["DBus", "MonkeyCallAPI", "ProcessSpawn"]),
        // Who is behind a connection (host, Flatpak, Snap): telephony policy, kept out of the DBus library.
        .target(name: "PeerIdentity", dependencies: ["DBus", "BoundedFile", "ScreenText"]),

        // The user's language: gettext (libintl.h, part of glibc) for every program that shows text to a person.
        .systemLibrary(name: "CIntl"),
        .target(name: "Localization", dependencies: ["CIntl"]),

        // Text for a screen or a terminal: caller text made safe (controls and bidi overrides out,
        // markup escaped), and the few text tools FoundationEssentials lacks (trimming, percent
        // decoding, unbuffered standard output and error).
        .target(name: "ScreenText"),

        // Desktop notifications through libnotify, knowing nothing of telephony.
        .target(name: "DesktopNotifications", dependencies: ["CLibnotify", "GLibLoop", "ScreenText", logging, orderedCollections]),

        // Debian's libsqlite3, for CallHistory.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Recents and Favorites in SQLite, knowing nothing of D-Bus.
        .target(name: "CallHistory", dependencies: ["TelephonyVocabulary", "CSQLite", "QueueExecutor"]),

        // The telephony model in pure Swift: no D-Bus, takes a clock.
        .target(name: "TelephonyCore", dependencies: ["CTimerFD", "TelephonyVocabulary", "ScreenText", heap]),
        // The words every layer shares, each once with its wire name: call states, end reasons,
        // handle types, DTMF types, Recents statuses, action kinds. No dependencies.
        .target(name: "TelephonyVocabulary"),

        // Call directories: blocking and identification entries per provider,
        // memory-mapped files, the block list. Pure Swift, no D-Bus.
        .target(name: "CallDirectory", dependencies: ["CBoundary", "PhoneNumber", "ScreenText"]),
        // Phone handles read as numbers (directory numbers, matching keys). No dependencies.
        .target(name: "PhoneNumber"),

        // The user's address book: an in-memory index from E.164 numbers to names, fed by vCard
        // folders (inotify) and by GNOME's address books through the monkeycall-contacts helper.
        // Pure Swift, no D-Bus, no libebook.
        .target(name: "AddressBook", dependencies: ["PhoneNumber", "ProcessSpawn", "QueueExecutor", "ScreenText", logging]),
        // The system's search (GNOME Shell, KRunner) over favorites, contacts and Recents: matching
        // and ranking as plain Swift over immutable indexes made from snapshots. No D-Bus.
        .target(name: "PeopleSearch", dependencies: ["AddressBook", "TelephonyVocabulary", "CGLib"]),
        // Reads evolution-data-server's address books through libebook and streams numbers and
        // names to the daemon over a pipe: libebook's 10–16 MiB stay out of monkeycalld.
        .executableTarget(name: "monkeycall-contacts", dependencies: ["CEBook"]),

        // The names of the D-Bus API, shared by the service and its clients.
        .target(name: "MonkeyCallAPI", dependencies: ["DBus", "TelephonyVocabulary"]),

        // The service: the telephony core published on D-Bus.
        .target(name: "TelephonyService", dependencies: ["BoundedFile", "CMalloc", "DBus", "QueueExecutor", "ProcessSpawn", "PeerIdentity", "MonkeyCallAPI", "TelephonyCore", "DesktopNotifications", "Ringtone", "ScreenText", "CallHistory", "CallDirectory", "PhoneNumber", "AddressBook", "PeopleSearch", "Localization", logging, orderedCollections]),

        // The typed client of the D-Bus contract, for the CLI's kind of tools and the Phone app.
        .target(name: "MonkeyCallClient", dependencies: ["DBus", "MonkeyCallAPI"]),

        // The Phone app (org.monkeycall.Phone). GTK 4 and libadwaita 1.2, found through pkg-config.
        .systemLibrary(name: "CGtk", pkgConfig: "libadwaita-1", providers: [.apt(["libadwaita-1-dev", "libgtk-4-dev"])]),
        // The GObject boundary: signals to Swift closures, object data, casts, GtkBuilder files, and
        // the main dispatch queue (Swift's main actor) drained from the GLib main loop.
        .target(name: "GObjectBoundary", dependencies: ["CGtk", "ScreenText"]),
        // The app's state and view models, without GTK: tested as plain Swift.
        .target(name: "PhoneModel", dependencies: ["MonkeyCallClient", "MonkeyCallAPI", "DBus", "QueueExecutor", "ScreenText", "Localization"]),
        // The GTK program: a Swift type and a .ui template (in ui/) per window, page and row, wired
        // to PhoneModel; the .ui files compiled into the program as a GResource at build time.
        .executableTarget(name: "monkeycall-phone", dependencies: ["PhoneModel", "MonkeyCallClient", "MonkeyCallAPI", "GObjectBoundary", "CGtk", "Localization", "ScreenText"],
                          exclude: ["ui"], plugins: ["CompileGResources"]),
        // glib-compile-resources over a target's ui/*.gresource.xml, the bundle embedded in the program.
        .plugin(name: "CompileGResources", capability: .buildTool()),
        // The bench's minimal window, to measure the Phone app against (monkeycall-bench --phone).
        .executableTarget(name: "monkeycall-phone-baseline", dependencies: ["GObjectBoundary", "CGtk", "Localization"]),

        // CallKit's shapes and names over the D-Bus API, for Swift apps.
        .target(name: "MonkeyCallKit", dependencies: ["DBus", "MonkeyCallAPI", "QueueExecutor"]),

        // The daemon's, the CLI's and the bridge's command lines: libraries, so that one program can
        // be all three (Programs/monkeycall), as the package installs it.
        .target(name: "MonkeyCallDaemon", dependencies: ["TelephonyService", "AddressBook", "TelephonyCore", "DBus", "QueueExecutor", "MonkeyCallAPI", "DesktopNotifications", "ScreenText", "CMalloc", "Localization", argumentParser, logging, serviceLifecycle]),
        .target(name: "MonkeyCallCLI", dependencies: ["DBus", "QueueExecutor", "MonkeyCallAPI", "MonkeyCallClient", "ScreenText", "Localization", argumentParser]),
        .target(name: "BaresipCommand", dependencies: ["BaresipBridge", "MonkeyCallKit", "MonkeyCallAPI", "ScreenText", argumentParser]),
        // `monkeycall`: the CLI, and the daemon or the bridge when started by their names.
        .executableTarget(name: "monkeycall", dependencies: ["MonkeyCallCLI", "MonkeyCallDaemon", "BaresipCommand"], path: "Sources/Programs/monkeycall"),
        .executableTarget(name: "monkeycalld", dependencies: ["MonkeyCallDaemon"], path: "Sources/Programs/monkeycalld"),
        // The seed's MonkeyCall sample app, ported to MonkeyCallKit.
        .executableTarget(name: "monkeycall-demo", dependencies: ["MonkeyCallKit", argumentParser]),
        // baresip's ctrl_tcp bridged to MonkeyCall, on MonkeyCallKit; the executable is only its command line.
        .target(name: "BaresipBridge", dependencies: ["MonkeyCallKit", "QueueExecutor", "ProcessSpawn", "ScreenText"]),
        .executableTarget(name: "monkeycall-baresip", dependencies: ["BaresipCommand"], path: "Sources/Programs/monkeycall-baresip"),
        // Prints dbus/org.monkeycall.Telephony1.xml from the API's specs (scripts/generate-api-xml).
        .executableTarget(name: "monkeycall-api-xml", dependencies: ["DBus", "MonkeyCallAPI"]),
        // Fuzzes the whole D-Bus surface from one app, on the host or in a sandbox (FuzzTests runs it both ways).
        .executableTarget(name: "monkeycall-fuzz", dependencies: ["FuzzSupport", "DBus", "MonkeyCallAPI", argumentParser]),
        // The seeded generator and hostile values that monkeycall-fuzz and FuzzTests share.
        .target(name: "FuzzSupport", dependencies: ["DBus", "TelephonyVocabulary"]),
        .executableTarget(name: "monkeycall-bench", dependencies: ["DBus", "DBusTestSupport", "MonkeyCallAPI", "CallHistory", "CallDirectory", "AddressBook", argumentParser]),

        .testTarget(name: "DBusTests", dependencies: ["DBus", "DBusTestSupport", "PeerIdentity", "BoundedFile"]),
        .testTarget(name: "TelephonyCoreTests", dependencies: ["TelephonyCore"]),
        .testTarget(name: "MonkeyCallKitTests", dependencies: ["MonkeyCallKit", "DBus", "DBusTestSupport", "MonkeyCallAPI", "TelephonyService", "TelephonyCore", logging]),
        // Resources/ holds a Python provider that the end-to-end tests run.
        .testTarget(name: "ServiceTests", dependencies: ["DBus", "PeerIdentity", "DBusTestSupport", "MonkeyCallAPI", "TelephonyService", "TelephonyCore", "CallHistory", "DesktopNotifications", "AddressBook", "Localization", "PeopleSearch", "Ringtone"],
                    exclude: ["Resources"]),
        // The running monkeycalld under hostile input and random call sequences.
        .testTarget(name: "FuzzTests", dependencies: ["DBus", "DBusTestSupport", "MonkeyCallAPI", "FuzzSupport"]),
        .testTarget(name: "CallHistoryTests", dependencies: ["CallHistory", "DBusTestSupport", grdb]),
        .testTarget(name: "CallDirectoryTests", dependencies: ["CallDirectory", "PhoneNumber"]),
        // Resources/ holds the Python script that edits GNOME's address book through libebook.
        .testTarget(name: "AddressBookTests", dependencies: ["AddressBook", "DBusTestSupport"],
                    exclude: ["Resources"]),
        .testTarget(name: "ScreenTextTests", dependencies: ["ScreenText"]),
        // The Phone app's models against a fake backend, and the real window driven through AT-SPI
        // (Resources/ holds the Python driver) with the real daemon and a provider.
        .testTarget(name: "PhoneTests", dependencies: ["CallHistory", "PhoneModel", "MonkeyCallClient", "MonkeyCallAPI", "DBus", "DBusTestSupport", "ScreenText"],
                    exclude: ["Resources"]),
        // The bridge's mapping without baresip, and real SIP calls between two baresip processes.
        .testTarget(name: "BaresipTests", dependencies: ["BaresipBridge", "MonkeyCallKit", "DBus", "DBusTestSupport", "MonkeyCallAPI"]),
    ]
)
