// Design note: premium features offline (FORMAT.md §10).
//
// A successful validation turns paid features on for `grace` (7 days by default); without a
// newer one they switch off, and a check is due once `revalidationInterval` (a day) has
// passed. Offline, the only clock is the device's, which its owner can set back. So the state
// remembers `lastSeen`, the latest time it was shown, which only moves forward: a clock that
// reads earlier than that (beyond a few minutes of ordinary clock correction) has been set
// back, and paid features are off until a check succeeds. A successful check is the one thing
// that re-anchors `lastSeen`, because it really happened.
//
//     validated Monday 08:00, grace 7 days → on until the next Monday 07:59:59.999, off at
//     08:00; shown Friday, then the clock set back to Tuesday → off (clock set back).
//
// The state comes from the local document's `settings.premium` (plus `lastSeen`, which the app
// keeps beside it); import never changes either, since merge and replace keep the local
// `premium` (FORMAT.md §5.1 rule 6).

/// Whether paid features are on, as a pure value: every question takes `now`.
public struct Entitlement: Equatable, Sendable {
    /// The answer of `status(now:)` and `observe(now:)`: on until an instant, or off and why.
    public enum Status: Equatable, Sendable {
        /// On; switches off at `until` unless a check succeeds first.
        case active(until: Timestamp)
        /// Off until a check succeeds (`recordValidation(at:plan:expiresAt:)`).
        case expired(Reason)

        /// Whether paid features are on, whatever the instant or the reason.
        public var isActive: Bool {
            if case .active = self { return true }
            return false
        }
    }

    /// Why paid features are off, so the app can say what brings them back.
    public enum Reason: Equatable, Sendable {
        /// No successful check on record (`settings.premium` is absent).
        case neverValidated
        /// The grace after the last successful check ran out at `at`.
        case graceEnded(at: Timestamp)
        /// The plan itself ended at `at` (the server's `expiresAt`).
        case planEnded(at: Timestamp)
        /// The clock reads earlier than `lastSeen`: it was set back.
        case clockSetBack(lastSeen: Timestamp)
    }

    /// Seven days in milliseconds: how long paid features stay on after a successful check
    /// (FORMAT.md §10).
    public static let defaultGrace: Int64 = 7 * Timestamp.millisecondsPerDay
    /// One day in milliseconds: checks happen at most daily (FORMAT.md §10).
    public static let defaultRevalidationInterval: Int64 = Timestamp.millisecondsPerDay
    /// Clock corrections smaller than this (NTP nudging a phone's clock) are not "set back".
    public static let defaultClockTolerance: Int64 = 5 * 60_000

    /// The last successful validation (`settings.premium`), nil if there never was one.
    public private(set) var premium: Premium?
    /// The latest `now` this state was shown; it only moves forward.
    public private(set) var lastSeen: Timestamp?
    /// Milliseconds after `premium.validatedAt` that paid features stay on, unless the plan's
    /// own `expiresAt` comes first.
    public var grace: Int64
    /// Milliseconds after `premium.validatedAt` from which `isRevalidationDue(now:)` answers true.
    public var revalidationInterval: Int64
    /// Milliseconds the clock may read before `lastSeen` without counting as set back.
    public var clockTolerance: Int64

    /// The state from the local document's `settings.premium` and the `lastSeen` the app keeps
    /// beside it; the durations are in milliseconds.
    public init(
        premium: Premium?, lastSeen: Timestamp? = nil, grace: Int64 = defaultGrace,
        revalidationInterval: Int64 = defaultRevalidationInterval,
        clockTolerance: Int64 = defaultClockTolerance
    ) {
        self.premium = premium
        self.lastSeen = lastSeen
        self.grace = grace
        self.revalidationInterval = revalidationInterval
        self.clockTolerance = clockTolerance
    }

    /// Whether paid features are on at `now`.
    public func status(now: Timestamp) -> Status {
        guard let premium else { return .expired(.neverValidated) }
        let lastKnown = max(lastSeen ?? premium.validatedAt, premium.validatedAt)
        if now.millisecondsSince1970 < lastKnown.millisecondsSince1970 - clockTolerance {
            return .expired(.clockSetBack(lastSeen: lastKnown))
        }
        let effectiveNow = max(now, lastKnown)
        let graceEnd = premium.validatedAt.adding(milliseconds: grace)
        if let planEnd = premium.expiresAt, planEnd <= graceEnd {
            return effectiveNow < planEnd
                ? .active(until: planEnd) : .expired(.planEnded(at: planEnd))
        }
        return effectiveNow < graceEnd
            ? .active(until: graceEnd) : .expired(.graceEnded(at: graceEnd))
    }

    /// Whether the app should check with the server now: never checked, a day or more since
    /// the last check, or a clock that was set back.
    public func isRevalidationDue(now: Timestamp) -> Bool {
        guard let premium else { return true }
        if case .expired(.clockSetBack) = status(now: now) { return true }
        let effectiveNow = max(now, lastSeen ?? now)
        return effectiveNow.millisecondsSince1970 - premium.validatedAt.millisecondsSince1970
            >= revalidationInterval
    }

    /// Records that the app was used at `now` (moves `lastSeen` forward, never back) and
    /// returns the status then.
    @discardableResult
    public mutating func observe(now: Timestamp) -> Status {
        let status = status(now: now)
        lastSeen = max(lastSeen ?? now, now)
        return status
    }

    /// Records a successful check at `now` (the server's time when known) for `plan`, which
    /// runs until `expiresAt` (nil: renews until cancelled).
    public mutating func recordValidation(at now: Timestamp, plan: String, expiresAt: Timestamp?) {
        premium = Premium(plan: plan, validatedAt: now, expiresAt: expiresAt)
        lastSeen = now
    }
}
