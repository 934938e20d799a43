import ArgumentParser
import Foundation
import TrawlTestServer

/// `trawl serve`: the embedded test server, for manual experiments.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the loopback test server (fixtures and fault injection) until interrupted.")

    @Option(name: .shortAndLong, help: "Port on 127.0.0.1 (0 = any free port).")
    var port: Int = 8080

    @Option(help: "Event loop threads.")
    var threads: Int = ProcessInfo.processInfo.activeProcessorCount

    func run() async throws {
        let server = try await TestServer.start(port: port, threads: threads)
        print("trawl test server listening on \(server.baseURL)")
        print(TestServer.endpointHelp)
        while true {
            try await Task.sleep(for: .seconds(3600))
        }
    }
}
