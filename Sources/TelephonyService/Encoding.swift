import DBus
import MonkeyCallAPI
import TelephonyCore

/// Core values as the API's D-Bus values.
enum Encode {
    /// The `Call` object's properties, by name.
    static func properties(of call: Call, callerName: String? = nil) -> [String: DBusValue] {
        [
            "UUID": .string(call.uuid.apiString),
            "Provider": .objectPath(Telephony1.providerPath(call.provider.rawValue)),
            "ProviderName": .string(call.providerName),
            "Handle": .string(call.handle.value),
            "HandleType": .string(call.handle.type.rawValue),
            "CallerName": .string(callerName ?? call.callerName),
            "Outgoing": .bool(call.outgoing),
            "State": .string(call.state.rawValue),
            "OnHold": .bool(call.onHold),
            "Muted": .bool(call.muted),
            "HasConnected": .bool(call.hasConnected),
            "HasEnded": .bool(call.hasEnded),
            "HasVideo": .bool(call.hasVideo),
            "Group": .string(call.group?.apiString ?? ""),
            "SupportsHolding": .bool(call.supportsHolding),
            "SupportsGrouping": .bool(call.supportsGrouping),
            "SupportsUngrouping": .bool(call.supportsUngrouping),
            "SupportsDTMF": .bool(call.supportsDTMF),
            "StartedAt": .uint64(call.startedAt),
            "ConnectedAt": .uint64(call.connectedAt),
            "EndedAt": .uint64(call.endedAt),
        ]
    }

    /// The `Call` properties in declaration order, with their types.
    static let callProperties: KeyValuePairs<String, Signature> = [
        "UUID": "s", "Provider": "o", "ProviderName": "s", "Handle": "s", "HandleType": "s", "CallerName": "s",
        "Outgoing": "b", "State": "s", "OnHold": "b", "Muted": "b", "HasConnected": "b", "HasEnded": "b", "HasVideo": "b",
        "Group": "s", "SupportsHolding": "b", "SupportsGrouping": "b", "SupportsUngrouping": "b", "SupportsDTMF": "b",
        "StartedAt": "t", "ConnectedAt": "t", "EndedAt": "t",
    ]

    /// The configuration with every default filled in.
    static func configuration(_ configuration: ProviderConfiguration) -> DBusValue {
        .vardict([
            "Name": .string(configuration.name),
            "MaximumCallGroups": .uint32(UInt32(clamping: configuration.maximumCallGroups)),
            "MaximumCallsPerCallGroup": .uint32(UInt32(clamping: configuration.maximumCallsPerCallGroup)),
            "SupportsVideo": .bool(configuration.supportsVideo),
            "SupportedHandleTypes": configuration.supportedHandleTypes.map(\.rawValue).sorted().dbusValue,
            "IncludesCallsInRecents": .bool(configuration.includesCallsInRecents),
            "RingtoneSound": .string(configuration.ringtoneSound),
            "IconName": .string(configuration.iconName),
            "IconData": configuration.iconData.dbusValue,
            "URLSchemes": configuration.urlSchemes.dbusValue,
            "DesktopEntry": .string(configuration.desktopEntry),
        ])
    }

    /// `PerformAction`'s `args`: the action's keys as in `RequestTransaction`, plus `TransactionUUID`.
    static func arguments(of action: Action) -> DBusValue {
        var args: [String: DBusValue] = [
            "CallUUID": .string(action.callUUID.apiString),
            "TransactionUUID": .string(action.transactionID.apiString),
        ]
        switch action.kind {
        case .start(let handle, let video, let contactIdentifier):
            args["Handle"] = .string(handle.value)
            args["HandleType"] = .string(handle.type.rawValue)
            args["Video"] = .bool(video)
            args["ContactIdentifier"] = .string(contactIdentifier)
        case .answer, .end: break
        case .setHeld(let onHold): args["OnHold"] = .bool(onHold)
        case .setMuted(let muted): args["Muted"] = .bool(muted)
        case .setGroup(let other): args["GroupWith"] = .string(other?.apiString ?? "")
        case .playDTMF(let digits, let type):
            args["Digits"] = .string(digits)
            args["Type"] = .string(type.rawValue)
        }
        return .vardict(args)
    }
}
