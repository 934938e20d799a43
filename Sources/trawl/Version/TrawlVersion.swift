/// Trawl's own version, printed by `trawl --version` and written as `trawl_version` in `trawl bench --json`.
///
/// SwiftPM has no build-time hook for `git describe`, so this constant is the one place a release sets: the release
/// process edits `current` to the tag (e.g. `"1.0.0"`) in the tagged commit. Every other build says `dev`.
enum TrawlVersion {
    static let current = "dev"
}
