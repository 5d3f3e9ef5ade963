import CallHistory
import DBus
import FoundationEssentials
import MonkeyCallAPI
import ScreenText
import TelephonyCore

/// `Favorites` on the root object: the user's favorite handles, which also name callers
/// (`HistoryStore.favoriteNames`), and a call to one through the app that saved it.
@TelephonyActor
final class FavoritesInterface: HistoryInterface {
    let context: ServiceContext
    let controller: CallControllerInterface

    init(context: ServiceContext, controller: CallControllerInterface) {
        self.context = context
        self.controller = controller
    }

    nonisolated static func encode(_ favorite: Favorite) -> Telephony1.Favorite {
        var record = Telephony1.Favorite()
        (record.id, record.handle, record.handleType) = (UInt64(favorite.id ?? 0), favorite.handle, favorite.handleType)
        (record.name, record.providerName) = (favorite.name, favorite.providerName)
        return record
    }

    func interface() -> Interface {
        typealias API = Telephony1.Favorites
        return Interface(API.interface) {
            methodReplyingLater(API.add) { favorites, reply, handle, type, name, providerName in
                guard !handle.isEmpty, handle.utf8.count <= 1024, name.utf8.count <= 1024, providerName.utf8.count <= 64 else {
                    throw DBusError.invalidArgs("a favorite needs a handle of 1 to 1024 bytes, a name up to 1024 and a provider name up to 64")
                }
                if let refusal = ScreenText.handleRefusal(handle, named: "handle") { throw DBusError.invalidArgs(refusal) }
                _ = try HandleType.named(type)
                let favorite = Favorite(handle: handle, handleType: type, name: name, providerName: providerName)
                _ = try favorites.answer(reply.call, writing: { (try $0.addFavorite(favorite), try $0.favorites()) }) { favorites, result in
                    favorites.context.history?.setFavorites(result.1)
                    return [.uint64(UInt64(result.0.id ?? 0))]
                }
            }
            methodReplyingLater(API.remove) { favorites, reply, id in
                let id = try Self.id(id, "favorite")
                _ = try favorites.answer(reply.call, writing: { (try $0.removeFavorite(id: id), try $0.favorites()) }) { favorites, result in
                    favorites.context.history?.setFavorites(result.1)
                    guard result.0 else { throw DBusError.invalidArgs("no favorite has id \(id)") }
                    return []
                }
            }
            methodReplyingLater(API.list) { favorites, reply in
                _ = try favorites.answer(reply.call, reading: { try $0.favorites().map(Self.encode) })
            }
            methodReplyingLater(API.call) { favorites, reply, id in
                try favorites.call(reply, id, "favorite") { history, id in
                    try history.favorite(id: id).map { ($0.handle, $0.handleType, $0.providerName) }
                }
            }
        }
    }
}
