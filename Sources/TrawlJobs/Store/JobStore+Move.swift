import Foundation
import TrawlEngine

/// The first unit merged into an empty output is moved into place instead of copied: its segment is renamed over
/// the output. A single-source fetch then writes its items once (not once into the segment and again into the
/// output), needs no second copy's disk space, and ends without copying, `fsync`ing and deleting them all again
/// (walk (c): 100 MB, 0.1 s of a 0.9 s run).
///
/// Crash safety: the segment's bytes are durable before its unit is done; the rename is made durable (both
/// directories `fsync`ed) before the checkpoint records the merge. A crash between the rename and that checkpoint
/// leaves the segment missing and the output holding exactly its pages; `undoUnrecordedMoves` finds that at the
/// next open (the page index must vouch for every byte) and renames the output back, so the merge happens again.
extension JobStore {
    /// Renames the segment at `segmentPath` over `file` (an empty output) and returns the output reopened, or `nil`
    /// when it must be copied: the output is a stream, a link or hard-linked, in another file system, or its owner
    /// cannot be given to the segment.
    static func moveSegment(_ segmentPath: String, over file: DurableFile, length: Int64) throws -> DurableFile? {
        guard file.length == 0, length > 0, let ownership = file.soleOwnership() else { return nil }
        var segment = stat()
        guard lstat(segmentPath, &segment) == 0, segment.st_mode & S_IFMT == S_IFREG, segment.st_size == length
        else { return nil }
        // The output keeps the mode and owner it had (a user's 0600 output stays 0600).
        if segment.st_uid != ownership.owner || segment.st_gid != ownership.group {
            guard lchown(segmentPath, ownership.owner, ownership.group) == 0 else { return nil }
        }
        guard chmod(segmentPath, ownership.mode) == 0, rename(segmentPath, file.path) == 0 else { return nil }
        try DurableFiles.syncDirectory(containing: file.path)
        try DurableFiles.syncDirectory(containing: segmentPath)
        file.close()
        let moved = try DurableFile(path: file.path)
        guard moved.length == length else {
            moved.close()
            throw JobError.state(
                "the output \(file.path) holds \(moved.length) bytes after its first unit's \(length) were moved there",
                hint: "it was changed outside trawl while the job ran; pass --restart to write it again")
        }
        return moved
    }

    /// At open, before outputs are cut back to their recorded lengths: an output the checkpoint records as empty
    /// that starts with exactly the counted pages of the first unit the checkpoint counts bytes of, whose segment
    /// is missing, is that segment (the run crashed between the rename and the checkpoint). It is renamed back, and
    /// the usual checks cut it to the counted pages.
    static func undoUnrecordedMoves(_ checkpoint: Checkpoint, order: [String: [Int]], segmentDirectory: String) throws {
        for (output, ordinals) in order {
            let recorded = checkpoint.outputs[output] ?? Checkpoint.OutputState()
            guard recorded.length == 0 else { continue }
            // The first unit the checkpoint counts bytes of. (It may still say "running": the unit's last pages,
            // its end and the merge are recorded by one checkpoint. A unit before it that the checkpoint does not
            // know yet may have been moved instead; then its segment is the one missing, this one is there, and
            // the output is simply cut back and that unit fetched again.)
            let candidate = ordinals.dropFirst(recorded.merged).lazy.compactMap { ordinal in
                checkpoint.units[String(ordinal)].flatMap { $0.segment > 0 ? (ordinal: ordinal, state: $0) : nil }
            }.first
            guard let (ordinal, unit) = candidate else { continue }
            let segmentPath = segmentDirectory + "/\(ordinal).jsonl"
            let indexPath = SegmentIndex.path(segment: segmentPath)
            var status = stat()
            guard lstat(segmentPath, &status) != 0, errno == ENOENT, lstat(indexPath, &status) == 0,
                lstat(output, &status) == 0, status.st_mode & S_IFMT == S_IFREG, Int64(status.st_size) >= unit.segment
            else { continue }
            let moved = try DurableFile(path: output)
            let index = try DurableFile(path: indexPath)
            defer {
                moved.close()
                index.close()
            }
            // Only pages the index vouches for, byte for byte, are taken back; anything else is left to the checks
            // that follow (which will say what is wrong).
            guard (try? SegmentIndex.verify(unit, segment: moved, index: index)) != nil else { continue }
            guard rename(output, segmentPath) == 0 else {
                throw FileError("rename", output, reason: String(cString: strerror(errno)))
            }
            try DurableFiles.syncDirectory(containing: segmentPath)
            try DurableFiles.syncDirectory(containing: output)
        }
    }
}
