import Foundation
import TrawlEngine

/// How many engine loop threads a bench run uses (`trawl bench --loops`): a number from 1 to 64, or `auto`.
///
/// `auto` is one loop per core, at most 4 and at most the concurrency, like wrk's `-t`: one loop thread is one
/// core's worth of small requests. When the server runs on this machine (every target's host is loopback) it needs
/// cores too, and `auto` takes half of them: on 2 cores, one loop sent 51.0k requests/s to a loopback nginx where
/// two sent 44.6k (`Benchmarks/peers/results/bench-wrk-floor.txt`).
///
/// ```swift
/// BenchLoops.count("auto", concurrency: 64, targets: ["https://api.example/"], cores: 8)  // 4
/// BenchLoops.count("auto", concurrency: 64, targets: ["http://127.0.0.1:8080/"], cores: 2)  // 1
/// BenchLoops.count("many", concurrency: 64, targets: [], cores: 2)  // nil: not a loop count
/// ```
package enum BenchLoops {
    package static func count(
        _ text: String, concurrency: Int, targets: [String],
        cores: Int = ProcessInfo.processInfo.activeProcessorCount
    ) -> Int? {
        if text == "auto" {
            let usable = serverIsLocal(targets) ? cores / 2 : cores
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
