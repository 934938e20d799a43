import Foundation
import TrawlEngine

/// How many engine loop threads a bench run uses (`trawl bench --loops`): a number from 1 to 64, or `auto`.
///
/// `auto` is one loop per core, at most 4 and at most the concurrency, like wrk's `-t`: one loop thread is one
/// core's worth of small requests. When the server runs on this machine (every target's host is loopback) and
/// answers plain requests, it needs as much CPU per request as the client does, and `auto` leaves it half the
/// cores: on 2 cores, one loop sent 51.0k requests/s to a loopback nginx where two sent 44.6k
/// (`Benchmarks/peers/results/bench-wrk-floor.txt`). Paginated flows (`flows`) parse every page on the loops, the
/// client's work outweighs the server's, and they keep one loop per core (4,000 pages of 100 items from a loopback
/// nginx: 0.19-0.20 s with two loops, 0.24-0.30 s with one).
///
/// ```swift
/// BenchLoops.count("auto", concurrency: 64, targets: ["https://api.example/"], flows: false, cores: 8)  // 4
/// BenchLoops.count("auto", concurrency: 64, targets: ["http://127.0.0.1:8080/"], flows: false, cores: 2)  // 1
/// BenchLoops.count("auto", concurrency: 64, targets: ["http://127.0.0.1:8080/"], flows: true, cores: 2)  // 2
/// BenchLoops.count("many", concurrency: 64, targets: [], flows: false, cores: 2)  // nil: not a loop count
/// ```
package enum BenchLoops {
    package static func count(
        _ text: String, concurrency: Int, targets: [String], flows: Bool,
        cores: Int = ProcessInfo.processInfo.activeProcessorCount
    ) -> Int? {
        if text == "auto" {
            let usable = !flows && serverIsLocal(targets) ? cores / 2 : cores
            return max(1, min(usable, 4, concurrency))
        }
        guard let count = Int(text), (1...64).contains(count) else { return nil }
        return count
    }

    /// Whether every target's host is loopback (and there is one), so the server shares this machine's cores.
    static func serverIsLocal(_ targets: [String]) -> Bool {
        !targets.isEmpty && targets.allSatisfy { URLComponents(string: $0)?.host.map(Loopback.isLoopback) ?? false }
    }
}
