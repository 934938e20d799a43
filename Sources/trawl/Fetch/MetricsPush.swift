import Foundation
import TrawlEngine
import TrawlJobs

/// `--metrics-push`: the run's final metrics, sent to a Prometheus Pushgateway through Trawl's own engine.
///
/// A `PUT` to `URL/metrics/job/trawl` (for a shard, `.../shard@base64/B` with `B` the base64url of `I/N`, the
/// Pushgateway's spelling of a label value with a slash) replaces what the same run pushed before.
struct MetricsPush {
    let url: String

    init(base: String, shard: Shard?) {
        var url = base
        while url.hasSuffix("/") { url.removeLast() }
        url += "/metrics/job/trawl"
        if let shard {
            let value = Data("\(shard.index)/\(shard.count)".utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            url += "/shard@base64/" + value
        }
        self.url = url
    }

    static func isHTTP(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://")
    }

    /// Sends `text`; nil when the Pushgateway took it, else what went wrong.
    func send(_ text: [UInt8]) async -> String? {
        var configuration = Client.Configuration()
        configuration.timeouts.total = .seconds(30)
        let request = Request(
            url: url, method: .put, body: .bytes(text, contentType: "text/plain; version=0.0.4; charset=utf-8"))
        do {
            let response = try await Client(configuration: configuration).send(request)
            guard (200..<300).contains(response.status) else {
                let said = response.bodyText.prefix(200).trimmingCharacters(in: .whitespacesAndNewlines)
                return "--metrics-push \(url): the Pushgateway answered \(response.status)"
                    + (said.isEmpty ? "" : ": \(said)") + "; the metrics of this run were not pushed"
            }
            return nil
        } catch {
            return "--metrics-push \(url): \(error); the metrics of this run were not pushed"
        }
    }
}
