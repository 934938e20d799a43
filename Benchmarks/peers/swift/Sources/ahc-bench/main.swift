// ahc-bench URL CONCURRENCY REQUESTS [--http2] [-k]
// GETs URL REQUESTS times with CONCURRENCY requests in flight (one task per slot, each reading the whole
// body), over one AsyncHTTPClient whose HTTP/1.1 pool allows CONCURRENCY connections. Prints one JSON line.
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL

let args = CommandLine.arguments
guard args.count >= 4, let concurrency = Int(args[2]), let total = Int(args[3]), concurrency > 0 else {
    FileHandle.standardError.write("usage: ahc-bench URL CONCURRENCY REQUESTS [--http2] [-k]\n".data(using: .utf8)!)
    exit(2)
}
let url = args[1]
let http2 = args.contains("--http2")
let insecure = args.contains("-k")

var config = HTTPClient.Configuration()
config.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency)
config.httpVersion = http2 ? .automatic : .http1Only
if insecure {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.certificateVerification = .none
    config.tlsConfiguration = tls
}
let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)

struct Tally { var ok = 0; var errors = 0; var bytes = 0; var firstError: String? = nil }

func worker(_ count: Int) async -> Tally {
    var t = Tally()
    for _ in 0..<count {
        do {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 64 << 20)
            if response.status.code / 100 == 2 { t.ok += 1 } else { t.errors += 1 }
            t.bytes += body.readableBytes
        } catch {
            t.errors += 1
            if t.firstError == nil { t.firstError = "\(error)" }
        }
    }
    return t
}

let clock = ContinuousClock()
let start = clock.now
var sum = Tally()
await withTaskGroup(of: Tally.self) { group in
    for slot in 0..<concurrency {
        let share = total / concurrency + (slot < total % concurrency ? 1 : 0)
        group.addTask { await worker(share) }
    }
    for await t in group {
        sum.ok += t.ok; sum.errors += t.errors; sum.bytes += t.bytes
        if sum.firstError == nil { sum.firstError = t.firstError }
    }
}
let elapsed = start.duration(to: clock.now)
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
try? await client.shutdown()
let err = (sum.firstError ?? "").replacingOccurrences(of: "\"", with: "'")
print("{\"client\":\"async-http-client\",\"requests\":\(total),\"ok\":\(sum.ok),\"errors\":\(sum.errors),\"bytes\":\(sum.bytes),\"seconds\":\(seconds),\"requests_per_s\":\(Double(sum.ok) / seconds),\"first_error\":\"\(err)\"}")
