import CGtk

/// A GObject instance as Swift sees it: GTK's public structs import as typed pointers and final
/// types as opaque ones; both are the same address, so the boundary passes a raw pointer and
/// casts on the way into C (`cast`).
public typealias GPointer = UnsafeMutableRawPointer

/// `G_OBJECT(p)`, `GTK_WIDGET(p)`, `GTK_WINDOW(p)`…: a C cast, unchecked as in C (the builder's
/// ids say what each object is).
@inline(__always)
public func cast<T>(_ pointer: GPointer?) -> UnsafeMutablePointer<T>! {
    pointer?.assumingMemoryBound(to: T.self)
}

@inline(__always)
public func cast(_ pointer: GPointer?) -> OpaquePointer! { pointer.map(OpaquePointer.init) }

@inline(__always)
public func opaque(_ pointer: GPointer?) -> OpaquePointer! { pointer.map(OpaquePointer.init) }

@inline(__always)
public func raw<T>(_ pointer: UnsafeMutablePointer<T>?) -> GPointer! { pointer.map(UnsafeMutableRawPointer.init) }

@inline(__always)
public func raw(_ pointer: OpaquePointer?) -> GPointer! { pointer.map(UnsafeMutableRawPointer.init) }

// MARK: Signals

/// One closure per connection, kept alive by GLib and released by its destroy notify.
private final class SignalBox {
    let handler: Any
    init(_ handler: Any) { self.handler = handler }
}

private func box(_ handler: Any) -> GPointer { Unmanaged.passRetained(SignalBox(handler)).toOpaque() }

private func unbox<Handler>(_ data: GPointer?, _: Handler.Type) -> Handler {
    Unmanaged<SignalBox>.fromOpaque(data!).takeUnretainedValue().handler as! Handler
}

/// Releases a box when GLib drops the closure (the object died or the handler was disconnected).
private let release: GClosureNotify = { data, _ in Unmanaged<SignalBox>.fromOpaque(data!).release() }

public typealias Handler0 = @MainActor () -> Void
public typealias Handler1 = @MainActor (GPointer?) -> Void
public typealias HandlerU = @MainActor (UInt32) -> Void
public typealias HandlerBool = @MainActor () -> Bool

// The trampolines: one per C signature, capturing nothing; GTK calls them on the main thread,
// which is the main actor's (see MainQueue).
private let trampoline0: @convention(c) (GPointer?, GPointer?) -> Void = { _, data in
    let handler = unbox(data, Handler0.self)
    MainActor.assumeIsolated { handler() }
}
private let trampoline1: @convention(c) (GPointer?, GPointer?, GPointer?) -> Void = { _, argument, data in
    let handler = unbox(data, Handler1.self)
    nonisolated(unsafe) let argument = argument
    MainActor.assumeIsolated { handler(argument) }
}
private let trampolineU: @convention(c) (GPointer?, UInt32, GPointer?) -> Void = { _, argument, data in
    let handler = unbox(data, HandlerU.self)
    MainActor.assumeIsolated { handler(argument) }
}
private let trampolineBool: @convention(c) (GPointer?, GPointer?) -> gboolean = { _, data in
    let handler = unbox(data, HandlerBool.self)
    return MainActor.assumeIsolated { handler() } ? 1 : 0
}

/// Connects `handler` through `trampoline`, the C function for its signal's signature: the handler
/// is boxed for GLib and the box released with the closure.
@MainActor
private func connect<Trampoline>(_ instance: GPointer?, _ signal: String, _ handler: Any, through trampoline: Trampoline) -> UInt {
    UInt(mc_signal_connect(instance, signal, unsafeBitCast(trampoline, to: GCallback.self), box(handler), release))
}

/// Connects a signal whose handler takes only the instance (`clicked`, `activate`, `changed`).
@discardableResult @MainActor
public func connect(_ instance: GPointer?, _ signal: String, _ handler: @escaping Handler0) -> UInt {
    connect(instance, signal, handler, through: trampoline0)
}

/// Connects a signal whose handler takes the instance and one pointer (`notify::x`, a list item
/// factory's `setup` and `bind`, a GAction's `activate`, a dialog's `response`).
@discardableResult @MainActor
public func connect(_ instance: GPointer?, _ signal: String, _ handler: @escaping Handler1) -> UInt {
    connect(instance, signal, handler, through: trampoline1)
}

/// Connects a signal whose handler takes the instance and an unsigned number (a list view's `activate`).
@discardableResult @MainActor
public func connectPosition(_ instance: GPointer?, _ signal: String, _ handler: @escaping HandlerU) -> UInt {
    connect(instance, signal, handler, through: trampolineU)
}

/// Connects a signal whose handler answers true or false (`close-request`: true keeps the window).
@discardableResult @MainActor
public func connectReturning(_ instance: GPointer?, _ signal: String, _ handler: @escaping HandlerBool) -> UInt {
    connect(instance, signal, handler, through: trampolineBool)
}

// MARK: Object data

private final class DataBox {
    let value: AnyObject
    init(_ value: AnyObject) { self.value = value }
}

/// Keeps a Swift object with a GObject, released when the GObject is finalized or the key is set again.
@MainActor
public func setData(_ object: GPointer?, _ key: String, _ value: AnyObject?) {
    let data = value.map { Unmanaged.passRetained(DataBox($0)).toOpaque() }
    g_object_set_data_full(cast(object), key, data) { data in Unmanaged<DataBox>.fromOpaque(data!).release() }
}

/// The Swift object kept with a GObject under `key`.
@MainActor
public func data<T: AnyObject>(_ object: GPointer?, _ key: String, as _: T.Type = T.self) -> T? {
    guard let data = g_object_get_data(cast(object), key) else { return nil }
    return Unmanaged<DataBox>.fromOpaque(data).takeUnretainedValue().value as? T
}

public typealias HandlerKey = @MainActor (UInt32) -> Bool

private let trampolineKey: @convention(c) (GPointer?, UInt32, UInt32, UInt32, GPointer?) -> gboolean = { _, key, _, _, data in
    let handler = unbox(data, HandlerKey.self)
    return MainActor.assumeIsolated { handler(key) } ? 1 : 0
}

/// Connects a key controller's `key-pressed` (keyval, keycode, modifiers): true when handled.
@discardableResult @MainActor
public func connectKey(_ instance: GPointer?, _ signal: String, _ handler: @escaping HandlerKey) -> UInt {
    connect(instance, signal, handler, through: trampolineKey)
}
