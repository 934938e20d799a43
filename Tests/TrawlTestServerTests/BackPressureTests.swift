import Testing
import TrawlTestSupport
import TrawlTestServer

extension TrawlTestServerTests {
    @Suite("Back-pressure", .hangGuard)
    struct BackPressureTests {
        /// A slow reader must hold the server back: neither the bytes it has handed to the socket nor
        /// the process memory may run ahead of what the client has read by more than the buffers.
        @Test func slowReaderBoundsServerMemory() async throws {
            try await withServer { server in
                let total = 256 * 1024 * 1024
                let baseline = residentMemory()
                let client = try RawHTTPClient(port: server.port)
                try client.request("/bytes/\(total)")
                let head = try client.readHead()
                #expect(head.header("Content-Length") == String(total))

                var received = 0
                var peakGrowth = 0
                var maxLead = 0
                // Slow phase: small reads with pauses, for about half a second.
                for _ in 0..<25 {
                    let bytes = try client.readSome(limit: 64 * 1024)
                    #expect(isPattern(bytes, from: received))
                    received += bytes.count
                    try await Task.sleep(for: .milliseconds(20))
                    maxLead = max(maxLead, server.stats.bytesWritten - received)
                    peakGrowth = max(peakGrowth, residentMemory() - baseline)
                }
                // Fast phase: drain the rest, checking the pattern at the start of each read.
                var reads = 0
                while received < total {
                    let bytes = try client.readSome(limit: min(256 * 1024, total - received))
                    try #require(!bytes.isEmpty)
                    if bytes.first != TestServer.patternByte(at: received) {
                        Issue.record("pattern mismatch at \(received)")
                        break
                    }
                    received += bytes.count
                    reads += 1
                    if reads % 64 == 0 {
                        peakGrowth = max(peakGrowth, residentMemory() - baseline)
                    }
                }
                #expect(received == total)
                #expect(maxLead < 32 * 1024 * 1024, "server ran \(maxLead) bytes ahead of the reader")
                // maxLead is the precise check; resident memory is the whole test process's, which other suites
                // running in parallel also use, so its bound is loose.
                #expect(peakGrowth < 160 * 1024 * 1024, "resident memory grew by \(peakGrowth) bytes")
            }
        }

        /// Compression is CPU-bound (about 400 MB/s of input): the stream works in short slices, so
        /// the one event loop thread keeps answering other connections, and output stays small.
        @Test func gzipStreamSharesTheEventLoop() async throws {
            try await withServer { server in
                let client = try RawHTTPClient(port: server.port, receiveBuffer: 64 * 1024)
                try client.request("/gzip/\(64 * 1024 * 1024 * 1024)")
                _ = try client.readHead()
                _ = try client.readSome()
                for _ in 0..<5 {
                    let start = ContinuousClock.now
                    #expect(try RawHTTPClient.fetch(port: server.port, "/status/200").status == 200)
                    // Without time slicing this waited for seconds; allow for a loaded machine.
                    #expect(ContinuousClock.now - start < .milliseconds(1500))
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(server.stats.bytesWritten < 8 * 1024 * 1024)
                #expect(server.stats.inFlight == 1)
            }
        }
    }
}
