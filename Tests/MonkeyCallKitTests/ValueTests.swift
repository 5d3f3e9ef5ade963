import DBus
import Foundation
@testable import MonkeyCallKit
import Testing

@Suite("MonkeyCallKit values")
struct ValueTests {
    @Test("the configuration has CallKit's defaults and encodes every key")
    func configurationDefaults() {
        let configuration = CXProviderConfiguration(localizedName: "Monkey")
        #expect(configuration.maximumCallGroups == 2)
        #expect(configuration.maximumCallsPerCallGroup == 5)
        #expect(configuration.supportsVideo == false)
        #expect(configuration.includesCallsInRecents)
        #expect(configuration.supportedHandleTypes == [.generic, .phoneNumber, .emailAddress])
        configuration.urlSchemes = ["monkeycall"]
        let entries = configuration.dbusValue.vardict ?? [:]
        #expect(entries["Name"] == .string("Monkey"))
        #expect(entries["URLSchemes"] == ["monkeycall"].dbusValue)
        #expect(entries["SupportedHandleTypes"] == ["email-address", "generic", "phone-number"].dbusValue)
        #expect(entries["RingtoneSound"] == nil)
    }

    @Test("the API's names of the enums' cases are Telephony1's words, and read back")
    func apiNames() {
        #expect(CXCallEndedReason.allCases.map(\.apiName) == ["failed", "remote-ended", "unanswered", "answered-elsewhere", "declined-elsewhere"])
        #expect(CXHandle.HandleType.allCases.map(\.apiName) == ["generic", "phone-number", "email-address"])
        #expect(CXPlayDTMFCallAction.ActionType.allCases.map(\.apiName) == ["single-tone", "soft-pause", "hard-pause"])
        #expect(CXHandle.HandleType(apiName: "email-address") == .emailAddress)
        #expect(CXPlayDTMFCallAction.ActionType(apiName: "soft-pause") == .softPause)
        #expect(CXHandle.HandleType(apiName: "emailAddress") == nil)
    }

    @Test("an update sends only what was set")
    func partialUpdate() {
        let update = CXCallUpdate()
        #expect(update.update.dbusValue.vardict?.isEmpty == true)
        update.remoteHandle = CXHandle(type: .phoneNumber, value: "+14085555555")
        update.hasVideo = true
        #expect(update.update.dbusValue.vardict == ["Handle": DBusValue.string("+14085555555"), "HandleType": .string("phone-number"), "HasVideo": .bool(true)])
    }

    @Test("D-Bus error names become CallKit's error codes")
    func errorMapping() {
        let prefix = "org.monkeycall.Telephony1.Error."
        let incoming = ErrorMapping.incoming(DBusError(name: prefix + "CallUUIDAlreadyExists", message: "taken"))
        #expect(CXErrorCodeIncomingCallError.callUUIDAlreadyExists ~= incoming)
        let request = ErrorMapping.request(DBusError(name: prefix + "MaximumCallGroupsReached", message: "full"))
        #expect((request as? CXErrorCodeRequestTransactionError)?.code == .maximumCallGroupsReached)
        let other = ErrorMapping.request(DBusError(name: DBusError.Name.invalidArgs, message: "bad"))
        #expect((other as? CXError)?.name == DBusError.Name.invalidArgs)
        let down = ErrorMapping.request(DBusError(name: DBusError.Name.serviceUnknown, message: "x"))
        #expect((down as? CXError)?.code == .serviceNotRunning)
        #expect("\(down)".contains("monkeycalld is not running"))
        #expect("\(incoming)" == "CXErrorCodeIncomingCallError.callUUIDAlreadyExists: taken")
        #expect("\(request)" == "CXErrorCodeRequestTransactionError.maximumCallGroupsReached: full")
        #expect(!(CXErrorCodeRequestTransactionError.callUUIDAlreadyExists ~= incoming))
    }
}
