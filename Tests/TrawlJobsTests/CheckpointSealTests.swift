import Foundation
import Testing
import TrawlTestSupport

@testable import TrawlJobs

/// `Checkpoint.sealedEncoding` encodes once and puts the seal in place: its bytes must be exactly those of encoding
/// the sealed checkpoint, and the seal the digest of the rest, whatever the strings inside look like.
@Suite("Checkpoint: the seal spliced into one encoding equals a second encoding", .hangGuard)
struct CheckpointSealTests {
    /// The encoding `sealedEncoding` replaced: the unsealed checkpoint hashed, then the sealed one encoded again.
    static func encodedTwice(_ checkpoint: Checkpoint) throws -> [UInt8] {
        var sealed = checkpoint
        sealed.version = max(Checkpoint.sealedVersion, checkpoint.version)
        sealed.seal = try sealed.contentDigest()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return [UInt8](try encoder.encode(sealed))
    }

    static var checkpoints: [Checkpoint] {
        var plain = Checkpoint(fingerprint: "f", shard: "all", withMeta: false)
        var busy = Checkpoint(fingerprint: #"{"shard":"x"},"shard":"#, shard: "2/3", withMeta: true)
        busy.run = #"run "with" \"quotes\" ,"shard": and {braces} [brackets, one { left open"#
        busy.outputs["out.jsonl"] = Checkpoint.OutputState(length: 12, merged: 1, provisional: 40)
        var unit = Checkpoint.UnitState(id: #"u,"shard":{"#)
        unit.pages = 3
        unit.items = 300
        unit.segment = 4_096
        unit.pageDigest = "00ff00ff00ff00ff"
        unit.failure = "HTTP 500 at \\\"shard\\\": é ü \u{1F600}"
        unit.flags = [CompletenessFlag(
            source: "s", unit: "u", kind: .incompleteResults, message: #""shard":1"#, pageIndices: [0, 2])]
        busy.units["0"] = unit
        busy.units["12"] = Checkpoint.UnitState(id: "shard")
        busy.flags = ["7": [
            CompletenessFlag(source: "shard", unit: "shard", kind: .capped, message: "m", pageIndices: nil)
        ]]
        busy.children = ["shard": 5]
        plain.complete = true
        var old = Checkpoint(fingerprint: "f", shard: "all", withMeta: false)
        old.version = 1
        return [plain, busy, old]
    }

    @Test("the bytes equal encoding the sealed checkpoint, and read back intact", arguments: 0..<3)
    func sameBytes(_ index: Int) throws {
        let checkpoint = Self.checkpoints[index]
        let bytes = try checkpoint.sealedEncoding()
        let twice = try Self.encodedTwice(checkpoint)
        #expect(String(decoding: bytes, as: UTF8.self) == String(decoding: twice, as: UTF8.self))
        let (read, intact) = try Checkpoint.read(bytes)
        #expect(intact)
        #expect(read.seal != nil && read.version == Checkpoint.sealedVersion)
        #expect(read.units.keys.sorted() == checkpoint.units.keys.sorted())
    }

    @Test("a key is found only as a member of the outermost object")
    func topLevelKey() {
        let key = Array(#""shard":"#.utf8)
        let json = Array(#"{"a":{"shard":1},"b":"\",\"shard\":","c":[{"shard":2}],"shard":"all"}"#.utf8)
        let at = Checkpoint.topLevelKey(key, in: json)
        #expect(at.map { String(decoding: json[$0...], as: UTF8.self) } == #""shard":"all"}"#)
        #expect(Checkpoint.topLevelKey(key, in: Array(#"{"shard":0}"#.utf8)) == 1)
        #expect(Checkpoint.topLevelKey(key, in: Array(#"{"a":{"shard":0}}"#.utf8)) == nil)
        #expect(Checkpoint.topLevelKey(key, in: Array(#"{"a":"\\","shard":0}"#.utf8)) == 10)
        #expect(Checkpoint.topLevelKey(key, in: Array(#"{"a":"{[","shard":0}"#.utf8)) == 10)
    }
}
