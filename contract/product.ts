/**
 * What an activity sells, as the sale page shows it: description, price and picture.
 * One rule for both sides: the admin API validates with it, the edge re-checks pushed snapshots.
 * Web APIs only (runs in workerd and Node alike).
 */
import { z } from 'zod';

export const MAX_DESCRIPTION_LENGTH = 2_000;
export const MAX_IMAGE_URL_LENGTH = 2_048;
/** In the currency's minor unit (cents; whole yen for JPY). 10^12 minor units is no real flash sale. */
export const MAX_PRICE_MINOR = 1_000_000_000_000;

/**
 * Active ISO 4217 codes. A fixed list rather than `Intl.supportedValuesOf('currency')`, whose answer
 * depends on the runtime's ICU build (and lists withdrawn codes).
 */
const ISO_4217 = new Set(
  (
    'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD ' +
    'CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD ' +
    'GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT ' +
    'LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR ' +
    'NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP ' +
    'STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XCG ' +
    'XOF XPF YER ZAR ZMW ZWG'
  ).split(' '),
);

export const isCurrencyCode = (v: string): boolean => ISO_4217.has(v);

/** A site-relative path ("/img/x.png", not "//host") or an https URL without credentials. */
export function isProductImageUrl(v: string): boolean {
  if (v.length > MAX_IMAGE_URL_LENGTH) return false;
  if (/^\/(?!\/)[A-Za-z0-9._~%!$&'()*+,;=:@/-]*$/.test(v)) return true;
  if (!/^https:\/\/[^\s"'<>\\^`{|}]+$/.test(v)) return false;
  try {
    const url = new URL(v);
    return url.protocol === 'https:' && url.hostname !== '' && !url.username && !url.password;
  } catch {
    return false;
  }
}

/** The product fields; every one optional. Price and currency come together or not at all. */
export const productFieldsSchema = z.object({
  description: z.string().min(1).max(MAX_DESCRIPTION_LENGTH).optional(),
  priceCents: z.number().int().min(0).max(MAX_PRICE_MINOR).optional(),
  currency: z.string().refine(isCurrencyCode, 'currency must be an ISO 4217 code such as "EUR"').optional(),
  imageUrl: z
    .string()
    .refine(
      isProductImageUrl,
      `imageUrl must be an https URL or a site-relative path (at most ${MAX_IMAGE_URL_LENGTH} characters)`,
    )
    .optional(),
});
export type ProductFields = z.infer<typeof productFieldsSchema>;

/** A price without a currency (or the other way round) cannot be shown. */
export const priceIsComplete = (p: { priceCents?: number | undefined; currency?: string | undefined }) =>
  (p.priceCents === undefined) === (p.currency === undefined);
