/**
 * The account `npm run bench:ops` and `npm run bench:gc` measure with: a sandbox account seeded over the admin RPC
 * (as `seedAccount` does for the tests), its limits raised to the admin RPC's maximum so no request of the run is
 * refused, and endpoint 3's body of `bench/create-body.json` on one of its test properties.
 */
import { admin, call, type RunningApp, seedAccount } from "../test/support/app.ts"

export const benchAccount = async (app: Pick<RunningApp, "baseUrl" | "adminToken">) => {
  // seedAccount only calls the admin RPC: the address and the token are all it reads.
  const account = await seedAccount(app as RunningApp)
  await admin(app, (c) => c.SetLimits({ account_id: account.accountId, reads: 1_000_000, writes: 1_000_000 }))
  const template = JSON.parse(await Bun.file(new URL("create-body.json", import.meta.url)).text())
  const { property_external_id: _, ...body } = template
  const propertyId = account.testProperties[0]!.property_id
  const reservation = (externalId: string) => ({ ...body, external_id: externalId, property_id: propertyId })
  return {
    key: account.testKey,
    reservation,
    /** Creates the reservation `externalId` (the get case reads it); anything but 201 stops the run. */
    create: async (externalId: string) => {
      const created = await call(app, "POST", "/api/partners/reservations", {
        key: account.testKey,
        json: reservation(externalId)
      })
      if (created.status !== 201) throw new Error(`set-up: the reservation was answered ${created.status}`)
    }
  } as const
}
