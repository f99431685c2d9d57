/// The pure steps between schema versions (SPEC §3), one file per step. Each step takes a
/// document its own version's validator has accepted and returns the next version; the
/// reader runs them in order, validating before each.
public enum Migration {}
