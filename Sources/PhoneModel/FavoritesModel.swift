import Localization
import MonkeyCallAPI

public struct FavoriteRow: Equatable, Sendable {
    public let id: UInt64
    public let title: String
    /// The number and the app that calls it: "+1 408 555 0142 · PyPhone".
    public let subtitle: String
    public let accessibleLabel: String
}

/// Favorites: call with one click, add from Recents, Contacts or a number, remove.
public final class FavoritesModel: ModelPart {
    public private(set) var favorites: [Telephony1.Favorite] = []

    public var rows: [FavoriteRow] {
        favorites.map { favorite in
            let handle = Format.clean(favorite.handle)
            let name = Format.clean(favorite.name)
            let title = name.isEmpty ? handle : name
            let subtitle = tr("%1$s · %2$s", handle, Format.clean(favorite.providerName))
            return FavoriteRow(id: favorite.id, title: title, subtitle: subtitle, accessibleLabel: tr("%1$s, %2$s", title, subtitle))
        }
    }

    public func load() async {
        await change { favorites = try await backend.favorites() }
    }

    public func contains(handle: String) -> Bool { favorites.contains { $0.handle == handle } }

    @discardableResult
    public func add(handle: String, handleType: String, name: String, app: String) async -> Bool {
        do {
            _ = try await backend.addFavorite(handle: handle, handleType: handleType, name: name, app: app)
            report.say(tr("%1$s added to Favorites", Format.clean(name.isEmpty ? handle : name)))
            await load()
            return true
        } catch {
            report.error(error)
            return false
        }
    }

    public func add(recent entry: Telephony1.RecentEntry) async {
        await add(handle: entry.handle, handleType: entry.handleType.isEmpty ? Telephony1.HandleTypes.generic : entry.handleType,
                  name: entry.callerName == entry.handle ? "" : entry.callerName, app: entry.providerName)
    }

    public func remove(_ id: UInt64) async {
        await change {
            try await backend.removeFavorite(id)
            favorites.removeAll { $0.id == id }
        }
    }

    @discardableResult
    public func call(_ id: UInt64) async -> String? {
        do { return try await backend.callFavorite(id) } catch {
            report.error(error)
            return nil
        }
    }
}
