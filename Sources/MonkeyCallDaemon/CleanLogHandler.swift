import Logging
import ScreenText

/// Log lines carry what apps and callers wrote (an app's name, a block list pattern, a
/// handle in an error): cleaned as for a screen (`ScreenText`) before they reach a
/// terminal or the journal, so that an ESC cannot recolour the user's terminal and a
/// newline cannot fake a log line of its own.
struct CleanLogHandler: LogHandler {
    var inner: StreamLogHandler

    func log(event: LogEvent) {
        var event = event
        event.message = "\(ScreenText.clean(event.message.description))"
        event.metadata = event.metadata?.mapValues { .string(ScreenText.clean($0.description)) }
        inner.log(event: event)
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }
}
