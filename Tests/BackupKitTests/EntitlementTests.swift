import BackupKit
import Testing

private typealias F = StreakFixture

private let hour: Int64 = 3_600_000
private let day = Timestamp.millisecondsPerDay

/// (milliseconds since the check, active?): 6 days 23 hours on, 7 days off.
private let graceCases: [(Int64, Bool)] = [
    (0, true), (6 * day + 23 * hour, true), (7 * day - 1, true), (7 * day, false),
    (30 * day, false),
]

/// (milliseconds since the check, revalidation due?)
private let revalidationCases: [(Int64, Bool)] = [
    (0, false), (23 * hour + 59 * 60_000, false), (day, true), (5 * day, true),
]

@Suite struct EntitlementTests {
    static func validated(at text: String, expiresAt: String? = nil) throws -> Entitlement {
        let at = try F.instant(text)
        return Entitlement(
            premium: Premium(
                plan: "yearly", validatedAt: at, expiresAt: try expiresAt.map(F.instant)))
    }

    @Test(
        "paid features stay on for the grace after the last check, and no longer",
        arguments: graceCases)
    func graceBoundaries(elapsed: Int64, active: Bool) throws {
        let entitlement = try Self.validated(at: "2026-11-02T08:00:00.000Z")
        let validatedAt = try F.instant("2026-11-02T08:00:00.000Z")
        let status = entitlement.status(now: validatedAt.adding(milliseconds: elapsed))
        #expect(status.isActive == active)
        let graceEnd = validatedAt.adding(days: 7)
        #expect(status == (active ? .active(until: graceEnd) : .expired(.graceEnded(at: graceEnd))))
    }

    @Test("the grace is a setting")
    func configurableGrace() throws {
        var entitlement = try Self.validated(at: "2026-11-02T08:00:00.000Z")
        entitlement.grace = 3 * day
        let validatedAt = try F.instant("2026-11-02T08:00:00.000Z")
        #expect(entitlement.status(now: validatedAt.adding(milliseconds: 3 * day - 1)).isActive)
        #expect(!entitlement.status(now: validatedAt.adding(days: 3)).isActive)
    }

    @Test("a clock set back before the last check counts as expired")
    func clockSetBackBeforeCheck() throws {
        let entitlement = try Self.validated(at: "2026-11-02T08:00:00.000Z")
        let validatedAt = try F.instant("2026-11-02T08:00:00.000Z")
        #expect(
            entitlement.status(now: validatedAt.adding(milliseconds: -hour))
                == .expired(.clockSetBack(lastSeen: validatedAt)))
        // A correction of a minute or two is ordinary clock drift, not tampering.
        #expect(entitlement.status(now: validatedAt.adding(milliseconds: -60_000)).isActive)
    }

    /// Offline on day 8 (expired), the owner sets the clock back to day 5: still expired,
    /// because the state has seen day 8.
    @Test("setting the clock back into the grace does not switch features on again")
    func clockSetBackAfterExpiry() throws {
        var entitlement = try Self.validated(at: "2026-11-02T08:00:00.000Z")
        let validatedAt = try F.instant("2026-11-02T08:00:00.000Z")
        #expect(entitlement.observe(now: validatedAt.adding(days: 3)).isActive)
        #expect(!entitlement.observe(now: validatedAt.adding(days: 8)).isActive)
        let setBack = validatedAt.adding(days: 5)
        #expect(
            entitlement.observe(now: setBack)
                == .expired(.clockSetBack(lastSeen: validatedAt.adding(days: 8))))
        #expect(entitlement.lastSeen == validatedAt.adding(days: 8))
        #expect(entitlement.isRevalidationDue(now: setBack))

        // A successful check re-anchors the state, even at the earlier time.
        entitlement.recordValidation(at: setBack, plan: "yearly", expiresAt: nil)
        #expect(entitlement.status(now: setBack) == .active(until: setBack.adding(days: 7)))
        #expect(entitlement.lastSeen == setBack)
    }

    @Test(
        "revalidation is due daily, not more often",
        arguments: revalidationCases)
    func dailyRevalidation(elapsed: Int64, due: Bool) throws {
        let entitlement = try Self.validated(at: "2026-11-02T08:00:00.000Z")
        let validatedAt = try F.instant("2026-11-02T08:00:00.000Z")
        #expect(
            entitlement.isRevalidationDue(now: validatedAt.adding(milliseconds: elapsed)) == due)
    }

    @Test("never validated: off, and a check is due")
    func neverValidated() throws {
        let entitlement = Entitlement(premium: nil)
        let now = try F.instant("2026-11-02T08:00:00.000Z")
        #expect(entitlement.status(now: now) == .expired(.neverValidated))
        #expect(entitlement.isRevalidationDue(now: now))
    }

    @Test("a plan that ends inside the grace switches off when it ends")
    func planEnd() throws {
        let entitlement = try Self.validated(
            at: "2026-11-02T08:00:00.000Z", expiresAt: "2026-11-04T00:00:00.000Z")
        let planEnd = try F.instant("2026-11-04T00:00:00.000Z")
        #expect(
            entitlement.status(now: planEnd.adding(milliseconds: -1)) == .active(until: planEnd))
        #expect(entitlement.status(now: planEnd) == .expired(.planEnded(at: planEnd)))
    }
}

@Suite struct EntitlementImportTests {
    /// Another device's backup may carry a fresher validation, or none at all; merging or
    /// restoring it leaves this device's premium, and so its status, exactly as it was.
    @Test(
        "importing a backup never changes premium status",
        arguments: [MergeOptions.Mode.merge, .replace], [true, false])
    func importKeepsPremium(mode: MergeOptions.Mode, incomingHasPremium: Bool) throws {
        let validatedAt = try F.instant("2026-11-02T08:00:00.000Z")
        let now = validatedAt.adding(days: 8)
        let local = BackupDocument(
            exportedAt: validatedAt, deviceId: try F.id("phone"),
            settings: Settings(
                premium: Premium(plan: "yearly", validatedAt: validatedAt, expiresAt: nil)))
        let incoming = BackupDocument(
            exportedAt: now, deviceId: try F.id("laptop"),
            settings: Settings(
                premium: incomingHasPremium
                    ? Premium(plan: "lifetime", validatedAt: now, expiresAt: nil) : nil))

        let merged = merge(
            local: local, incoming: incoming, options: MergeOptions(now: now, mode: mode))
        #expect(merged.document.settings.premium == local.settings.premium)
        let before = Entitlement(premium: local.settings.premium)
        let after = Entitlement(premium: merged.document.settings.premium)
        #expect(after.status(now: now) == before.status(now: now))
        #expect(!after.status(now: now).isActive)
    }
}
