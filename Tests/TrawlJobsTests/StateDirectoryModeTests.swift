import Foundation
import Testing
import TrawlTestSupport

@testable import TrawlJobs

/// A state directory holds pages of items and requests: one trawl creates is the owner's alone (0700); one that
/// exists (`--state .`) keeps its mode.
@Suite("State directories are private when trawl creates them", .hangGuard)
struct StateDirectoryModeTests {
    static func mode(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func aNewStateDirectoryIsOwnerOnlyAndItsParentsAreNot() throws {
        let base = NSTemporaryDirectory() + "trawl-state-mode-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: base) }
        try JobStore.createDirectoryDurably(base + "/jobs/state", ownerOnly: true)
        #expect(Self.mode(base + "/jobs/state") == 0o700)
        // Parents and directories made without `ownerOnly` get what any new directory gets (the umask's mode).
        try FileManager.default.createDirectory(atPath: base + "/plain", withIntermediateDirectories: false)
        let plain = Self.mode(base + "/plain")
        #expect(Self.mode(base + "/jobs") == plain, "parents follow the umask")
        try JobStore.createDirectoryDurably(base + "/out", ownerOnly: false)
        #expect(Self.mode(base + "/out") == plain, "an output directory is not made private")
    }

    @Test func anExistingDirectoryKeepsItsMode() throws {
        let base = NSTemporaryDirectory() + "trawl-state-mode-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        #expect(chmod(base, 0o755) == 0)
        try JobStore.createDirectoryDurably(base, ownerOnly: true)
        #expect(Self.mode(base) == 0o755)
    }
}
