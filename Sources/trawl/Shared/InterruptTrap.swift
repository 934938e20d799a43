import Dispatch
import Foundation

/// Ctrl-C (SIGINT) handled on a dispatch queue, armed before `arm` returns.
///
/// libdispatch registers a signal source on its manager thread some time after `resume()`, and on Linux it
/// installs its own handler for the signal then. Setting SIGINT to "ignore" before that registration (the macOS
/// habit) threw away a Ctrl-C that came in between: on a loaded machine `trawl bench` kept running after Ctrl-C.
/// So `arm` leaves the disposition alone and returns once the source is registered; a Ctrl-C before that ends the
/// process as it would without a handler.
final class InterruptTrap {
    private let source: any DispatchSourceSignal

    private init(source: any DispatchSourceSignal) { self.source = source }

    static func arm(_ handler: @escaping @Sendable () -> Void) async -> InterruptTrap {
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler(handler: handler)
        await withCheckedContinuation { (registered: CheckedContinuation<Void, Never>) in
            source.setRegistrationHandler { registered.resume() }
            source.resume()
        }
        return InterruptTrap(source: source)
    }

    /// Ctrl-C ends the process as usual again.
    func disarm() {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }
}
