import Foundation
import TrawlEngine

/// The state directory's guards: one run at a time, no links where trawl keeps its files, and no
/// temporary state made under /dev or /proc.
extension JobStore {
    /// Where a run without `--state` keeps its temporary state: next to the output, except for a pipe or
    /// device under /dev or /proc (`-o /dev/null`, `-o /dev/stdout`, `<(…)`), where no directory may be made.
    static func stateAnchor(output: String) -> String {
        guard output.hasPrefix("/dev/") || output.hasPrefix("/proc/") else { return output }
        let name = "trawl-" + (output as NSString).lastPathComponent + "-\(getpid())"
        return (NSTemporaryDirectory() as NSString).appendingPathComponent(name)
    }

    /// Locks the state directory for this run (`STATE/lock`), or says which process holds it.
    static func lockState(_ directory: String) throws -> FileLock {
        do {
            return try FileLock(path: directory + "/lock")
        } catch let held as FileLock.Held {
            throw JobError.state(
                "the state directory \(directory) is in use by another trawl run"
                    + (held.pid.map { " (pid \($0))" } ?? " (its pid is not known yet)"),
                hint: "wait for it to end, or give this run its own --state directory")
        }
    }

    /// Refuses a symbolic link where trawl keeps its own files: writing through it would write elsewhere.
    static func refuseLink(_ path: String) throws {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        if attributes?[.type] as? FileAttributeType == .typeSymbolicLink {
            throw JobError.state(
                "\(path) is a symbolic link; trawl never writes through one", hint: "remove it and run again")
        }
    }
}
