// A minimal prerendered Nuxt site for TestNuxtPayloadKeepsNoOriginHost:
// its data names the origin (SSATD_ORIGIN at build time), and
// `nuxi generate` writes it into each route's page and _payload.json.
export default defineNuxtConfig({
  compatibilityDate: '2025-07-15',
  devtools: { enabled: false },
  telemetry: false,
  runtimeConfig: { public: { origin: process.env.SSATD_ORIGIN || 'http://origin.invalid' } },
  nitro: { prerender: { routes: ['/', '/story'] } },
})
