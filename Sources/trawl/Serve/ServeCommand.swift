import ArgumentParser
import Foundation
import TrawlTestServer

/// `trawl serve`: the embedded test server, for manual experiments.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the loopback test server (fixtures and fault injection) until interrupted.",
        discussion: """
            Endpoints (GET / lists them too):

            \(TestServer.endpointHelp)

            Living feeds: /feed/NAME and /shop/feed/NAME (the same feed) start with --feed-items items the \
            first time NAME is asked for; then every --feed-interval seconds each feed gains \
            \(defaultFeeds.added) items and \(defaultFeeds.touched) of its items change (a new rev, the newest \
            updated_at), so an incremental job finds something new on every run.

            docs/daily-job.yaml is a daily job for this server as it starts by default (incremental feed, \
            OAuth2 client credentials demo / demo-secret, customers and their orders): run \
            'trawl fetch docs/daily-job.yaml --state daily.state --output-dir out' twice (docs/daily-job.md).
            """)

    static let defaultFeeds = TestServer.LivingFeeds()

    @Option(name: .shortAndLong, help: "Port on 127.0.0.1 (0 = any free port).")
    var port: Int = 8080

    @Option(help: "Event loop threads.")
    var threads: Int = ProcessInfo.processInfo.activeProcessorCount

    @Option(help: ArgumentHelp("Items a feed starts with.", valueName: "n"))
    var feedItems: Int = Serve.defaultFeeds.initialItems

    @Option(help: ArgumentHelp("Seconds between two changes of the feeds (0: they never change).", valueName: "s"))
    var feedInterval: Double = Double(Serve.defaultFeeds.interval.components.seconds)

    func validate() throws {
        guard feedItems >= 0 else { throw ValidationError("--feed-items must be 0 or more") }
        guard feedInterval >= 0, feedInterval <= 86_400 else {
            throw ValidationError("--feed-interval must be a number of seconds from 0 to 86400")
        }
    }

    func run() async throws {
        var feeds = Self.defaultFeeds
        feeds.initialItems = feedItems
        feeds.interval = .milliseconds(Int64((feedInterval * 1000).rounded()))
        let server = try await TestServer.start(port: port, threads: threads, livingFeeds: feeds)
        // Written at once, unbuffered: a script that started `trawl serve > log &` can read the address at once.
        let banner = "trawl test server listening on \(server.baseURL)\n" + TestServer.endpointHelp + "\n"
        FileHandle.standardOutput.write(Data(banner.utf8))
        while true {
            try await Task.sleep(for: .seconds(3600))
        }
    }
}
