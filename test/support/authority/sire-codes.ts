/**
 * The SIRE upload file (Migración Colombia) as the public sources describe it, for the fake SIRE gateway
 * (`../fakeSire.ts`). Written down here from the sources, never imported from `src/`: a code or column our own
 * code gets wrong must be caught by the fake, not copied into it. Tags are those of
 * `../shared/domain/colombia-reporting.md` §0.
 *
 * - C11 toneill57/innpilot _assets/sire/pasos-para-reportar-al-sire.md.backup.md
 *   @ 5b0b58a30456e2409b1d6d25ed5b08c358993594 — Migración's guide "PASOS PARA REPORTAR LA INFORMACIÓN MEDIANTE
 *   ARCHIVO": 13 columns "siguiendo el orden estricto y sin eliminar columnas", TAB-delimited text, codes "solamente
 *   números", names "solamente letras", the second surname left blank when there is none, E or S, dates
 *   día/mes/año, and the four document codes.
 * - C12 toneill57/muva-chat _assets/sire/codigos-pais.json @ 44c910a95400d9ac4560a3d1c1056f54b33cedaa — the
 *   country list presented as Migración's SIRE list (copied, value for value, by C13 StudentInfUJJ/sire-terminal
 *   sire_converter.py @ de0261e003ac9717b6935fc48c53e852960bf878).
 * - C4 BreynerTejada/housetel backend/apps/compliance/codes.py @ 3cda8133050bf81d6573ffc077cadd98364029a2 —
 *   SIRE_COUNTRY_CODES (the DIAN table, written padded; the values are kept here without the zeros) and
 *   SIRE_DOCUMENT_TYPES; services/sire.py @ 03f768092c0a28d861559df04ba1f18f7bb71931 for CRLF, upper-case ASCII
 *   and a DIVIPOLA city code as the Colombian end of procedencia/destino.
 * - C5 franbz1/hotel-san-miguel src/common/enums/tipoDocSireUpload.ts @ 2827704e97c014b639f9baad762ff1e97c1c06ba.
 * - C3 steadydee/owagents tools/hotel_pms/tests/test_reservation_tools.py @ a43c14ba864bcec9e7d4d1f62f747d3c2679db8d
 *   — the portal form's selects: nationality, procedencia and destino are country selects (249, 169).
 */

/** Columns per line (C11; C13 writes 13; C4's 12-column default merges the surnames). */
export const COLUMNS = 13

/** Column names in the guide's order (C11), 1-based in the messages. */
export const COLUMN_NAMES: ReadonlyArray<string> = [
  "código del hotel",
  "código de ciudad",
  "tipo de documento",
  "número de identificación",
  "código nacionalidad",
  "primer apellido",
  "segundo apellido",
  "nombre",
  "tipo de movimiento",
  "fecha del movimiento",
  "lugar de procedencia",
  "lugar de destino",
  "fecha de nacimiento"
]

/**
 * The one column that may be blank (1-based): "en caso de que el extranjero no tenga el segundo apellido dejamos
 * esta casilla en blanco" (C11).
 */
export const MAY_BE_BLANK: ReadonlySet<number> = new Set([7])

/**
 * Document codes a source sends in column 3. The guide's four (C11: pasaporte 3, cédula de extranjería 5, carné
 * diplomático 46, documento extranjero 10), and the codes sources give for the permits it does not list: PPT 52
 * (C5, C13) or 48 (C4), PEP 55 (C5) or 47 (C4). C5's `CC = 1` is the portal login's document, not a guest's.
 */
export const DOCUMENT_CODES: ReadonlySet<string> = new Set(["3", "5", "46", "10", "52", "48", "55", "47"])

/** E (entrada) or S (salida), "únicamente la inicial" (C11). */
export const MOVEMENTS: ReadonlySet<string> = new Set(["E", "S"])

/** C12: code → name, in its order (250 entries, INTERPOL, NACIONES UNIDAS and NO APLICA included). */
export const C12_COUNTRIES: Readonly<Record<string, string>> = {
  "13": "AFGANISTAN", "384": "ÅLAND", "17": "ALBANIA", "23": "ALEMANIA",
  "37": "ANDORRA", "40": "ANGOLA", "895": "ANGUILA", "143": "ANTARTIDA",
  "43": "ANTIGUA Y BARBUDA", "921": "ANTILLAS HOLANDESAS", "44": "ANTILLAS NEERLANDESAS", "55": "ARABIA SAUDITA",
  "59": "ARGELIA", "63": "ARGENTINA", "65": "ARMENIA", "67": "ARUBA",
  "448": "ARY MACEDONIA", "69": "AUSTRALIA", "72": "AUSTRIA", "75": "AZERBAIYAN",
  "77": "BAHAMAS", "80": "BAHREIN", "81": "BANGLADESH", "83": "BARBADOS",
  "87": "BELGICA", "88": "BELICE", "89": "BENIN", "90": "BERMUDAS",
  "85": "BIELORRUSIA", "97": "BOLIVIA", "99": "BOSNIA", "101": "BOTSWANA",
  "105": "BRASIL", "108": "BRUNEI", "111": "BULGARIA", "113": "BURKINA FASO",
  "115": "BURUNDI", "117": "BUTAN", "127": "CABO VERDE", "141": "CAMBOYA",
  "145": "CAMERUN", "149": "CANADA", "151": "CHAD", "211": "CHILE",
  "215": "CHINA", "221": "CHIPRE", "717": "CIUDAD DEL VATICANO", "169": "COLOMBIA",
  "171": "COMORAS", "651": "COREA DEL NORTE", "190": "COREA DEL SUR", "193": "COSTA DE MARFIL",
  "196": "COSTA RICA", "198": "CROACIA", "199": "CUBA", "201": "CURAZAO",
  "232": "DINAMARCA", "235": "DOMINICA", "239": "ECUADOR", "240": "EGIPTO",
  "242": "EL SALVADOR", "244": "EMIRATOS ARABES UNIDOS", "246": "ERITREA", "247": "ESLOVAQUIA",
  "248": "ESLOVENIA", "245": "ESPAÑA", "249": "ESTADOS UNIDOS", "251": "ESTONIA",
  "253": "ETIOPIA", "267": "FILIPINAS", "271": "FINLANDIA", "255": "FIYI",
  "275": "FRANCIA", "281": "GABON", "285": "GAMBIA", "287": "GEORGIA",
  "289": "GHANA", "293": "GIBRALTAR", "297": "GRANADA", "301": "GRECIA",
  "315": "GROENLANDIA", "338": "GUADALUPE", "339": "GUAM", "317": "GUATEMALA",
  "340": "GUAYANA FRANCESA", "146": "GUERNSEY", "329": "GUINEA", "331": "GUINEA ECUATORIAL",
  "334": "GUINEA-BISSAU", "325": "GUYANA", "341": "HAITI", "345": "HONDURAS",
  "347": "HONG KONG", "355": "HUNGRIA", "361": "INDIA", "365": "INDONESIA",
  "980": "INTERPOL", "372": "IRAN", "369": "IRAQ", "375": "IRLANDA",
  "173": "ISLA BOUVET", "380": "ISLA DE MAN", "387": "ISLA DE NAVIDAD", "379": "ISLANDIA",
  "137": "ISLAS CAIMAN", "178": "ISLAS COCOS", "388": "ISLAS COOK", "390": "ISLAS FEROE",
  "186": "ISLAS HEARD Y MCDONALD", "191": "ISLAS MALVINAS", "392": "ISLAS MARIANAS DEL NORTE", "475": "ISLAS MARSHALL",
  "381": "ISLAS PITCAIRN", "395": "ISLAS SALOMON", "900": "ISLAS TURCAS Y CAICOS", "200": "ISLAS ULTRAMARINAS DE ESTADOS UNIDOS",
  "866": "ISLAS VIRGENES BRITANICAS", "867": "ISLAS VIRGENES ESTADOUNIDENSES", "383": "ISRAEL", "386": "ITALIA",
  "391": "JAMAICA", "399": "JAPON", "160": "JERSEY", "403": "JORDANIA",
  "406": "KAZAJISTAN", "410": "KENIA", "412": "KIRGUISTAN", "411": "KIRIBATI",
  "414": "KOSOVO", "413": "KUWAIT", "420": "LAOS", "426": "LESOTHO",
  "428": "LETONIA", "431": "LIBANO", "434": "LIBERIA", "438": "LIBIA",
  "441": "LIECHTENSTEIN", "429": "LITUANIA", "442": "LUXEMBURGO", "447": "MACAO",
  "450": "MADAGASCAR", "455": "MALASIA", "458": "MALAWI", "461": "MALDIVAS",
  "464": "MALI", "467": "MALTA", "474": "MARRUECOS", "490": "MARTINICA",
  "485": "MAURICIO", "488": "MAURITANIA", "494": "MAYOTTE", "493": "MEXICO",
  "503": "MICRONESIA", "495": "MOLDAVIA", "496": "MONACO", "497": "MONGOLIA",
  "499": "MONTENEGRO", "501": "MONTSERRAT", "505": "MOZAMBIQUE", "507": "MYANMAR",
  "981": "NACIONES UNIDAS", "512": "NAMIBIA", "508": "NAURU", "517": "NEPAL",
  "521": "NICARAGUA", "528": "NIGER", "525": "NIGERIA", "531": "NIUE",
  "0": "NO APLICA", "163": "NORFOLK", "538": "NORUEGA", "539": "NUEVA CALEDONIA",
  "540": "NUEVA ZELANDA", "542": "OMAN", "573": "PAISES BAJOS", "576": "PAKISTAN",
  "578": "PALAOS", "600": "PALESTINA (ANP)", "580": "PANAMA", "582": "PAPUA NUEVA GUINEA",
  "586": "PARAGUAY", "589": "PERU", "609": "POLINESIA FRANCESA", "603": "POLONIA",
  "607": "PORTUGAL", "611": "PUERTO RICO", "618": "QATAR", "628": "REINO UNIDO",
  "998": "REPUBLICA CENTROAFRICANA", "207": "REPUBLICA CHECA", "642": "REPUBLICA DE MACEDONIA", "170": "REPUBLICA DEL CONGO",
  "177": "REPUBLICA DEMOCRATICA DEL CONGO", "647": "REPUBLICA DOMINICANA", "650": "REUNION", "670": "RUMANIA",
  "673": "RUSIA", "675": "RWANDA", "680": "SAHARA OCCIDENTAL", "699": "SAMOA",
  "698": "SAMOA AMERICANA", "695": "SAN CRISTOBAL Y NIEVES", "701": "SAN MARINO", "682": "SAN PEDRO Y MIQUELON",
  "705": "SAN VICENTE Y LAS GRANADINAS", "708": "SANTA HELENA", "715": "SANTA LUCIA", "720": "SANTO TOME Y PRINCIPE",
  "728": "SENEGAL", "729": "SERBIA", "731": "SEYCHELLES", "735": "SIERRA LEONA",
  "741": "SINGAPUR", "744": "SIRIA", "748": "SOMALIA", "750": "SRI LANKA",
  "756": "SUDAFRICA", "759": "SUDAN", "764": "SUECIA", "767": "SUIZA",
  "770": "SURINAM", "730": "SVALBARD Y JAN MAYEN", "773": "SWAZILANDIA", "776": "TAILANDIA",
  "774": "TAIWAN", "780": "TANZANIA", "775": "TAYIKISTAN", "779": "TERRITORIO BRITANICO DEL OCEANO INDICO",
  "781": "TERRITORIOS AUSTRALES FRANCESES", "783": "TIMOR ORIENTAL", "800": "TOGO", "812": "TOKELAU",
  "810": "TONGA", "815": "TRINIDAD Y TOBAGO", "820": "TUNEZ", "829": "TURKMENISTAN",
  "827": "TURQUIA", "828": "TUVALU", "830": "UCRANIA", "833": "UGANDA",
  "845": "URUGUAY", "847": "UZBEKISTAN", "849": "VANUATU", "850": "VENEZUELA",
  "855": "VIETNAM", "394": "WALLIS Y FUTUNA", "880": "YEMEN", "920": "YIBUTI",
  "890": "ZAMBIA", "892": "ZIMBABUE"
}

/** C4: ISO alpha-2 → the DIAN code, padded to three digits as C4 writes it (the file carries it unpadded). */
export const C4_COUNTRIES: Readonly<Record<string, string>> = {
  AF: "013", AL: "017", DE: "023", AM: "026", AW: "027", BA: "029", BF: "031", AD: "037", AO: "040", AI: "041",
  AG: "043", SA: "053", DZ: "059", AR: "063", AU: "069", AT: "072", AZ: "074", BS: "077", BH: "080", BD: "081",
  BB: "083", BE: "087", BZ: "088", BM: "090", BY: "091", MM: "093", BO: "097", BW: "101", BR: "105", BN: "108",
  BG: "111", BI: "115", BT: "119", CV: "127", KY: "137", KH: "141", CM: "145", CA: "149", VA: "159", CC: "165",
  CO: "169", KM: "173", CG: "177", CK: "183", KP: "187", KR: "190", CI: "193", CR: "196", HR: "198", CU: "199",
  TD: "203", CL: "211", CN: "215", TW: "218", CY: "221", BJ: "229", DK: "232", DM: "235", EC: "239", EG: "240",
  SV: "242", ER: "243", AE: "244", ES: "245", SK: "246", SI: "247", US: "249", EE: "251", ET: "253", FO: "259",
  PH: "267", FI: "271", FR: "275", GA: "281", GM: "285", GE: "287", GH: "289", GI: "293", GD: "297", GR: "301",
  GL: "305", GP: "309", GU: "313", GT: "317", GF: "325", GN: "329", GQ: "331", GW: "334", GY: "337", HT: "341",
  HN: "345", HK: "351", HU: "355", IN: "361", ID: "365", IQ: "369", IR: "372", IE: "375", IS: "379", IL: "383",
  IT: "386", JM: "391", JP: "399", JO: "403", KZ: "406", KE: "410", KI: "411", KG: "412", KW: "413", LA: "420",
  LS: "426", LV: "429", LB: "431", LR: "434", LY: "438", LI: "440", LT: "443", LU: "445", MO: "447", MK: "448",
  MG: "450", MY: "455", MW: "458", MV: "461", ML: "464", MT: "467", MP: "469", MH: "472", MA: "474", MQ: "477",
  MU: "485", MR: "488", MX: "493", FM: "494", MD: "496", MN: "497", MC: "498", MS: "501", MZ: "505", NA: "507",
  NR: "508", CX: "511", NP: "517", NI: "521", NE: "525", NG: "528", NU: "531", NF: "535", NO: "538", NC: "542",
  PG: "545", NZ: "548", VU: "551", OM: "556", NL: "573", PK: "576", PW: "578", PA: "580", PY: "586", PE: "589",
  PN: "593", PF: "599", PL: "603", PT: "607", PR: "611", QA: "618", GB: "628", CF: "640", CZ: "644", DO: "647",
  RE: "660", ZW: "665", RO: "670", RW: "675", RU: "676", SB: "677", EH: "685", WS: "687", AS: "690", KN: "695",
  SM: "697", PM: "700", VC: "705", SH: "710", LC: "715", ST: "720", SN: "728", SC: "731", SL: "735", SG: "741",
  SY: "744", SO: "748", LK: "750", ZA: "756", SD: "759", SE: "764", CH: "767", SR: "770", SZ: "773", TJ: "774",
  TH: "776", TZ: "780", DJ: "783", IO: "787", TL: "788", TG: "800", TK: "805", TO: "810", TT: "815", TN: "820",
  TC: "823", TM: "825", TR: "827", TV: "828", UA: "830", UG: "833", UY: "845", UZ: "847", VE: "850", VN: "855",
  VG: "863", VI: "866", FJ: "870", WF: "875", YE: "880", RS: "885", CD: "888", ZM: "890", PS: "897"
}

/**
 * A country code some source gives (columns 5, 11, 12): C12's list or C4's. The fake cannot know which of two
 * conflicting codes the portal uses; it refuses a code that is in neither (an ISO numeric code such as 840, a
 * padded "023", a made-up number).
 */
export const COUNTRY_CODES: ReadonlySet<string> = new Set([
  ...Object.keys(C12_COUNTRIES),
  ...Object.values(C4_COUNTRIES).map((code) => String(Number(code)))
])
