#if canImport(Glibc)
import Glibc
#endif

/// The targets, by the name `scripts/fuzz` and the corpus folders use.
let fuzzTargets: [String: @Sendable ([UInt8]) -> Void] = [
    "json-chunking": JSONChunkingTarget.run,
    "link-header": LinkHeaderTarget.run,
    "job-file": JobFileTarget.run,
    "received-headers": ReceivedHeadersTarget.run,
    "content-disposition": ContentDispositionTarget.run,
    "resp-reply": RESPReplyTarget.run,
    "cache-record": CacheRecordTarget.run,
]

/// The target named by TRAWL_FUZZ_TARGET, looked up once.
let selectedTarget: @Sendable ([UInt8]) -> Void = {
    let name = getenv("TRAWL_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = fuzzTargets[name] else {
        let names = fuzzTargets.keys.sorted().joined(separator: ", ")
        printError("TrawlFuzz: set TRAWL_FUZZ_TARGET to one of: \(names) (got '\(name)')")
        exit(2)
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    selectedTarget(bytes)
    return 0
}

/// An invariant of a target: a failure stops the run (libFuzzer keeps the input as a crash file).
func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        printError("INVARIANT BROKEN: \(message())")
        abort()
    }
}

/// A small deterministic generator for choices derived from the input's bytes.
struct InputRandom {
    private var state: UInt64

    init(seed: some Sequence<UInt8>) {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for byte in seed { state = (state ^ UInt64(byte)) &* 0x100_0000_01B3 }
        self.state = state | 1
    }

    mutating func next(below bound: Int) -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Int(state % UInt64(bound))
    }
}

func printError(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}
