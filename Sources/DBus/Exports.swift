// Users of the D-Bus library hand C objects and queue-bound state across with the C boundary's wrapper.
@_exported import CBoundary
