/// The pure steps between schema versions (FORMAT.md §4.1), one file per step. Each step takes a
/// document its own version's validator has accepted and returns the next version; the
/// reader runs them in order, validating before each. 3→4 has no step: a version-3 file is a
/// version-4 document that holds no kept day logs (FORMAT.md §2.4); 4→3, for an app that cannot read
/// 4 yet, is `BackupDocument.droppingKeptDayLogs()`.
public enum Migration {}
