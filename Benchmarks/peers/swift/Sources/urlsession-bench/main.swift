// urlsession-bench URL CONCURRENCY REQUESTS
// GETs URL REQUESTS times with CONCURRENCY requests in flight through one URLSession (ephemeral
// configuration, httpMaximumConnectionsPerHost = CONCURRENCY). Prints one JSON line.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

let args = CommandLine.arguments
guard args.count >= 4, let concurrency = Int(args[2]), let total = Int(args[3]), concurrency > 0,
      let url = URL(string: args[1]) else {
    FileHandle.standardError.write("usage: urlsession-bench URL CONCURRENCY REQUESTS\n".data(using: .utf8)!)
    exit(2)
}
let cfg = URLSessionConfiguration.ephemeral
cfg.httpMaximumConnectionsPerHost = concurrency
cfg.timeoutIntervalForRequest = 30
let session = URLSession(configuration: cfg)

struct Tally { var ok = 0; var errors = 0; var bytes = 0; var firstError: String? = nil }

func worker(_ count: Int) async -> Tally {
    var t = Tally()
    for _ in 0..<count {
        do {
            let (data, response) = try await session.data(from: url)
            if let http = response as? HTTPURLResponse, http.statusCode / 100 == 2 { t.ok += 1 } else { t.errors += 1 }
            t.bytes += data.count
        } catch {
            t.errors += 1
            if t.firstError == nil { t.firstError = "\(error)" }
        }
    }
    return t
}

let start = Date()
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
let seconds = Date().timeIntervalSince(start)
let err = (sum.firstError ?? "").replacingOccurrences(of: "\"", with: "'")
print("{\"client\":\"URLSession\",\"requests\":\(total),\"ok\":\(sum.ok),\"errors\":\(sum.errors),\"bytes\":\(sum.bytes),\"seconds\":\(seconds),\"requests_per_s\":\(Double(sum.ok) / seconds),\"first_error\":\"\(err)\"}")
