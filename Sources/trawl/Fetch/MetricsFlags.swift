import ArgumentParser
import Foundation
import NIOCore
import TrawlEngine
import TrawlJobs

/// `trawl fetch`'s Prometheus flags: serve the job's metrics while it runs, push them when it ends.
struct MetricsFlags: ParsableArguments {
    @Option(
        name: .customLong("metrics-listen"),
        help: ArgumentHelp("""
            Serve the job's metrics in Prometheus text format at http://ADDRESS/metrics while it runs: \
            IP:PORT (127.0.0.1:9464, [::1]:9464, 0.0.0.0:9464 for every interface) or PORT alone (loopback); \
            port 0 takes a free port and names it on stderr.
            """, valueName: "address"))
    var listen: String?

    @Option(
        name: .customLong("metrics-push"),
        help: ArgumentHelp("""
            At the end of the run, failed or not, PUT the job's metrics to the Prometheus Pushgateway at URL \
            (grouping key job=trawl and, for a shard, shard=I/N). A failed push is a warning.
            """, valueName: "url"))
    var push: String?

    func validate() throws {
        if let listen {
            do {
                _ = try MetricsAddress.parse(listen)
            } catch {
                throw ValidationError("--metrics-listen \(error)")
            }
        }
        if let push, MetricsPush.isHTTP(push) == false {
            throw ValidationError("--metrics-push '\(push)' is not an http:// or https:// URL of a Pushgateway")
        }
    }

    /// The exporter of this run, listening already when asked to (by the flag, or by the job file's
    /// `settings.metrics_listen`); nil when neither asks for metrics.
    func start(shard: Shard?, settings: JobSettings) async throws -> MetricsExport? {
        let address = try listen.map { text in try MetricsAddress.parse(text) } ?? settings.metricsListen
        guard address != nil || push != nil else { return nil }
        let metrics = JobPrometheusMetrics(shard: shard.map { "\($0.index)/\($0.count)" } ?? "all")
        var server: MetricsServer?
        if let address {
            let listen = listen.map { "--metrics-listen \($0)" } ?? "settings.metrics_listen \(address)"
            do {
                let started = try await MetricsServer.start(address) { metrics.text }
                if address.port == 0 {
                    // The system chose the port: say which, the only way to find the endpoint.
                    let host = address.host.contains(":") ? "[\(address.host)]" : address.host
                    FileHandle.standardError.write(
                        Data("trawl: metrics at http://\(host):\(started.port)/metrics\n".utf8))
                }
                server = started
            } catch let error as IOError where error.errnoCode == EADDRINUSE {
                throw CLIFailure("error: \(listen): the port is in use by another process; "
                    + "pick another port")
            } catch {
                throw CLIFailure("error: \(listen): cannot listen there (\(error))")
            }
        }
        return MetricsExport(metrics: metrics, server: server, push: push.map { MetricsPush(base: $0, shard: shard) })
    }
}

/// One run's metrics: the observer the runner counts into, the listener, the push at the end.
struct MetricsExport {
    let metrics: JobPrometheusMetrics
    let server: MetricsServer?
    let push: MetricsPush?

    /// After the run, failed or not: pushes the final counters (a failure is a warning on stderr) and closes the
    /// listener.
    func finish() async {
        if let push, let warning = await push.send(metrics.text) {
            FileHandle.standardError.write(Data("trawl: warning: \(TerminalText.safe(warning))\n".utf8))
        }
        await server?.stop()
    }
}
