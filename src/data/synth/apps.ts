/** The app catalogue: fixed names, packages and icons, the same in every episode and every seed. */

/** Glyph shapes drawn on app icons: simple, solid, and far apart at 8×8-pixel patch scale. */
export const ICON_SHAPES = [
  'circle',
  'square',
  'triangle',
  'diamond',
  'star',
  'ring',
  'plus',
  'cross',
  'bars',
  'hexagon',
  'chevron',
  'moon',
] as const;
export type IconShape = (typeof ICON_SHAPES)[number];

/** Icon background colours, chosen to stay apart after downsampling. */
export const ICON_BACKGROUNDS = [
  '#e53935', // red
  '#fb8c00', // orange
  '#fdd835', // yellow
  '#43a047', // green
  '#00897b', // teal
  '#1e88e5', // blue
  '#3949ab', // indigo
  '#8e24aa', // purple
  '#d81b60', // pink
  '#6d4c41', // brown
  '#212121', // black
  '#f5f5f5', // white
] as const;
const LIGHT_BACKGROUNDS = new Set<string>(['#fdd835', '#f5f5f5', '#fb8c00']);
const LIGHT_GLYPHS = ['#ffffff', '#fff176', '#80deea'] as const;
const DARK_GLYPHS = ['#212121', '#1565c0', '#c62828'] as const;

export interface AppIcon {
  background: string;
  shape: IconShape;
  glyph: string;
}

export type AppKind = 'google' | 'system' | 'third_party';

export interface AppInfo {
  id: string;
  /** Label under the icon. */
  name: string;
  /** Other names users give it in goals ("clock app", "the play store"). */
  aliases: string[];
  package: string;
  kind: AppKind;
  icon: AppIcon;
  /** AITW-style detector class for the icon. */
  iconType: string;
  /** Placeholder of the in-app search bar, for apps that have one. */
  search?: string;
  /** Row texts of the app's main screen. */
  rows: string[];
}

type Row = [id: string, name: string, pkg: string, kind: AppKind, iconType: string, search: string | null, rows: string[]];

// Order matters: it fixes every app's icon (see iconFor), so append new apps at the end.
const TABLE: Row[] = [
  ['clock', 'Clock', 'com.google.android.deskclock', 'google', 'ICON_TIME', null, ['7:00 AM  Mon–Fri', '8:30 AM  Sat, Sun', 'Alarm', 'Timer', 'Stopwatch', 'Bedtime']],
  ['calendar', 'Calendar', 'com.google.android.calendar', 'google', 'ICON_CALENDAR', 'Search', ['Today', 'Team sync 10:00', 'Lunch with Sam', 'Dentist 16:30', 'Gym', 'Tomorrow']],
  ['camera', 'Camera', 'com.google.android.GoogleCamera', 'google', 'ICON_TAKE_PHOTO', null, ['Photo', 'Video', 'Portrait', 'Night Sight', 'Panorama', 'Modes']],
  ['chrome', 'Chrome', 'com.android.chrome', 'google', 'ICON_WORLD', null, []],
  ['gmail', 'Gmail', 'com.google.android.gm', 'google', 'ICON_ENVELOPE', 'Search in mail', ['Primary', 'Your order has shipped', 'Weekly newsletter', 'Meeting notes', 'Invoice #4471', 'Photos from the trip']],
  ['maps', 'Maps', 'com.google.android.apps.maps', 'google', 'ICON_LOCATION', 'Search here', ['Restaurants', 'Gas', 'Coffee', 'Groceries', 'Home', 'Work']],
  ['photos', 'Photos', 'com.google.android.apps.photos', 'google', 'ICON_PHOTO', 'Search your photos', ['Today', 'Yesterday', 'Memories', 'Albums', 'Favorites', 'Screenshots']],
  ['playstore', 'Play Store', 'com.android.vending', 'google', 'ICON_PLAY', null, []],
  ['settings', 'Settings', 'com.android.settings', 'system', 'ICON_SETTINGS', null, []],
  ['youtube', 'YouTube', 'com.google.android.youtube', 'google', 'ICON_PLAY', 'Search YouTube', ['Home', 'Shorts', 'Subscriptions', 'Trending', 'Music', 'Gaming']],
  ['drive', 'Drive', 'com.google.android.apps.docs', 'google', 'ICON_CLOUD', 'Search in Drive', ['My Drive', 'Shared with me', 'Recent', 'Starred', 'Budget.xlsx', 'Notes.docx']],
  ['contacts', 'Contacts', 'com.google.android.contacts', 'google', 'ICON_PERSON', 'Search contacts', ['Alice Moreau', 'Ben Carter', 'Chloe Diaz', 'David Kim', 'Emma Stone', 'Frank Liu']],
  ['phone', 'Phone', 'com.google.android.dialer', 'google', 'ICON_CALL', 'Search contacts & places', ['Favorites', 'Recents', 'Contacts', 'Voicemail', 'Mom', 'Office']],
  ['messages', 'Messages', 'com.google.android.apps.messaging', 'google', 'ICON_CHAT', 'Search conversations', ['Mom', 'Sam', 'Delivery update', 'Verification code', 'Alex', 'Group chat']],
  ['calculator', 'Calculator', 'com.google.android.calculator', 'google', 'ICON_CALCULATOR', null, ['7  8  9  ÷', '4  5  6  ×', '1  2  3  −', '0  .  =  +']],
  ['files', 'Files', 'com.google.android.apps.nbu.files', 'google', 'ICON_FOLDER', 'Search in Files', ['Downloads', 'Images', 'Videos', 'Audio', 'Documents', 'Apps']],
  ['keep', 'Keep Notes', 'com.google.android.keep', 'google', 'ICON_NOTES', 'Search your notes', ['Shopping list', 'Ideas', 'Books to read', 'Packing list', 'Recipes', 'Reminders']],
  ['google', 'Google', 'com.google.android.googlequicksearchbox', 'google', 'ICON_GOOGLE', null, []],
  ['translate', 'Translate', 'com.google.android.apps.translate', 'google', 'ICON_TRANSLATE', 'Enter text', ['English', 'Spanish', 'Camera', 'Conversation', 'Transcribe', 'Saved']],
  ['ytmusic', 'YT Music', 'com.google.android.apps.youtube.music', 'google', 'ICON_MUSIC', 'Search songs, artists', ['Quick picks', 'Listen again', 'Mixed for you', 'New releases', 'Charts', 'Moods']],
  ['news', 'Google News', 'com.google.android.apps.magazines', 'google', 'ICON_NEWS', 'Search', ['For you', 'Headlines', 'Local', 'Technology', 'Sports', 'Science']],
  ['podcasts', 'Podcasts', 'com.google.android.apps.podcasts', 'google', 'ICON_MIC', 'Search podcasts', ['New episodes', 'Continue listening', 'Top podcasts', 'News', 'Comedy', 'History']],
  ['fit', 'Fit', 'com.google.android.apps.fitness', 'google', 'ICON_HEART', null, ['Heart Points', 'Steps', 'Journal', 'Browse', 'Weekly goal', 'Sleep']],
  ['docs', 'Docs', 'com.google.android.apps.docs.editors.docs', 'google', 'ICON_DOCUMENT', 'Search documents', ['Recent documents', 'Project plan', 'Resume', 'Meeting notes', 'Essay draft', 'Letter']],
  ['sheets', 'Sheets', 'com.google.android.apps.docs.editors.sheets', 'google', 'ICON_TABLE', 'Search spreadsheets', ['Budget 2023', 'Expenses', 'Inventory', 'Grades', 'Timesheet', 'Plan']],
  ['slides', 'Slides', 'com.google.android.apps.docs.editors.slides', 'google', 'ICON_SLIDES', 'Search presentations', ['Quarterly review', 'Pitch deck', 'Lecture 3', 'Team intro', 'Roadmap', 'Demo']],
  ['meet', 'Meet', 'com.google.android.apps.meetings', 'google', 'ICON_VIDEOCAM', null, ['New meeting', 'Join with a code', 'Calls', 'Meetings', 'History', 'Contacts']],
  ['recorder', 'Recorder', 'com.google.android.apps.recorder', 'google', 'ICON_MIC', 'Search recordings', ['Recordings', 'Lecture', 'Interview', 'Voice memo', 'Song idea', 'Meeting']],
  ['duolingo', 'Duolingo', 'com.duolingo', 'third_party', 'ICON_APP', null, ['Learn', 'Practice', 'Leaderboards', 'Quests', 'Shop', 'Profile']],
  ['spotify', 'Spotify', 'com.spotify.music', 'third_party', 'ICON_MUSIC', 'What do you want to listen to?', ['Home', 'Liked Songs', 'Daily Mix 1', 'Discover Weekly', 'Podcasts', 'Library']],
  ['netflix', 'Netflix', 'com.netflix.mediaclient', 'third_party', 'ICON_PLAY', 'Search shows, movies', ['Trending Now', 'Continue Watching', 'My List', 'New Releases', 'Top 10', 'Comedies']],
  ['instagram', 'Instagram', 'com.instagram.android', 'third_party', 'ICON_TAKE_PHOTO', 'Search', ['Your story', 'Reels', 'Following', 'Explore', 'Messages', 'Profile']],
  ['facebook', 'Facebook', 'com.facebook.katana', 'third_party', 'ICON_PEOPLE', 'Search Facebook', ['News Feed', 'Friends', 'Groups', 'Marketplace', 'Watch', 'Events']],
  ['whatsapp', 'WhatsApp', 'com.whatsapp', 'third_party', 'ICON_CHAT', 'Search', ['Chats', 'Family', 'Work group', 'Status', 'Calls', 'Communities']],
  ['tiktok', 'TikTok', 'com.zhiliaoapp.musically', 'third_party', 'ICON_MUSIC', 'Search', ['For You', 'Following', 'Friends', 'Inbox', 'Profile', 'LIVE']],
  ['reddit', 'Reddit', 'com.reddit.frontpage', 'third_party', 'ICON_CHAT', 'Search Reddit', ['Home', 'Popular', 'r/android', 'r/news', 'r/pics', 'Inbox']],
  ['amazon', 'Amazon Shopping', 'com.amazon.mShop.android.shopping', 'third_party', 'ICON_SHOPPING_CART', 'Search Amazon', ['Deals', 'Orders', 'Buy Again', 'Lists', 'Prime', 'Account']],
  ['ebay', 'eBay', 'com.ebay.mobile', 'third_party', 'ICON_SHOPPING_BAG', 'Search on eBay', ['Saved', 'Selling', 'Deals', 'Categories', 'Watchlist', 'Purchases']],
  ['uber', 'Uber', 'com.ubercab', 'third_party', 'ICON_CAR', 'Where to?', ['Ride', 'Reserve', 'Rental', 'Package', 'Home', 'Work']],
  ['lyft', 'Lyft', 'me.lyft.android', 'third_party', 'ICON_CAR', 'Where are you going?', ['Ride', 'Bikes', 'Scooters', 'Home', 'Work', 'Airport']],
  ['airbnb', 'Airbnb', 'com.airbnb.android', 'third_party', 'ICON_HOME', 'Where to?', ['Explore', 'Wishlists', 'Trips', 'Inbox', 'Profile', 'Experiences']],
  ['zoom', 'Zoom', 'us.zoom.videomeetings', 'third_party', 'ICON_VIDEOCAM', null, ['New Meeting', 'Join', 'Schedule', 'Share Screen', 'Meetings', 'Contacts']],
  ['pinterest', 'Pinterest', 'com.pinterest', 'third_party', 'ICON_PIN', 'Search for ideas', ['Home', 'Following', 'Recipes', 'Home decor', 'Outfits', 'Saved']],
  ['snapchat', 'Snapchat', 'com.snapchat.android', 'third_party', 'ICON_TAKE_PHOTO', 'Search', ['Chat', 'Stories', 'Spotlight', 'Map', 'Memories', 'Friends']],
  ['telegram', 'Telegram', 'org.telegram.messenger', 'third_party', 'ICON_SEND', 'Search', ['All chats', 'Saved Messages', 'News channel', 'Family', 'Work', 'Bots']],
  ['discord', 'Discord', 'com.discord', 'third_party', 'ICON_CHAT', 'Search', ['Direct Messages', 'Servers', 'Friends', 'Notifications', 'Voice', 'Profile']],
  ['waze', 'Waze', 'com.waze', 'third_party', 'ICON_LOCATION', 'Where to?', ['Home', 'Work', 'Recent', 'Saved places', 'Gas', 'Parking']],
  ['yelp', 'Yelp', 'com.yelp.android', 'third_party', 'ICON_STAR', 'Search for burgers, delivery…', ['Restaurants', 'Delivery', 'Takeout', 'Coffee', 'Bars', 'Nearby']],
  ['venmo', 'Venmo', 'com.venmo', 'third_party', 'ICON_DOLLAR', 'Search people', ['Pay or Request', 'Friends', 'Cards', 'Crypto', 'Activity', 'Me']],
  ['shazam', 'Shazam', 'com.shazam.android', 'third_party', 'ICON_MUSIC', 'Search', ['Tap to Shazam', 'Library', 'Charts', 'Concerts', 'Recent', 'Playlists']],
  ['audible', 'Audible', 'com.audible.application', 'third_party', 'ICON_HEADSET', 'Search titles', ['Home', 'Library', 'Discover', 'Wishlist', 'Podcasts', 'Profile']],
  ['kindle', 'Kindle', 'com.amazon.kindle', 'third_party', 'ICON_BOOK', 'Search Kindle', ['Library', 'Continue reading', 'Store', 'Collections', 'Samples', 'Notes']],
  ['strava', 'Strava', 'com.strava', 'third_party', 'ICON_RUN', null, ['Home', 'Maps', 'Record', 'Groups', 'You', 'Challenges']],
  ['booking', 'Booking.com', 'com.booking', 'third_party', 'ICON_BED', 'Enter destination', ['Stays', 'Flights', 'Car rental', 'Taxi', 'Bookings', 'Saved']],
  ['expedia', 'Expedia', 'com.expedia.bookings', 'third_party', 'ICON_AIRPLANE', 'Going to', ['Stays', 'Flights', 'Cars', 'Packages', 'Things to do', 'Trips']],
  ['doordash', 'DoorDash', 'com.dd.doordash', 'third_party', 'ICON_RESTAURANT', 'Search DoorDash', ['Pizza', 'Burgers', 'Sushi', 'Grocery', 'Orders', 'Account']],
  ['hulu', 'Hulu', 'com.hulu.plus', 'third_party', 'ICON_PLAY', 'Search', ['Home', 'TV', 'Movies', 'Sports', 'My Stuff', 'Live']],
  ['twitch', 'Twitch', 'tv.twitch.android.app', 'third_party', 'ICON_VIDEOCAM', 'Search', ['Following', 'Discover', 'Browse', 'Esports', 'Just Chatting', 'Music']],
  ['etsy', 'Etsy', 'com.etsy.android', 'third_party', 'ICON_SHOPPING_BAG', 'Search for anything on Etsy', ['Home', 'Favorites', 'Deals', 'Cart', 'Gifts', 'Jewelry']],
  ['walmart', 'Walmart', 'com.walmart.android', 'third_party', 'ICON_SHOPPING_CART', 'Search Walmart', ['Pickup', 'Delivery', 'Deals', 'Grocery', 'Pharmacy', 'Account']],
  ['linkedin', 'LinkedIn', 'com.linkedin.android', 'third_party', 'ICON_PEOPLE', 'Search', ['Home', 'My Network', 'Post', 'Notifications', 'Jobs', 'Messaging']],
  ['dropbox', 'Dropbox', 'com.dropbox.android', 'third_party', 'ICON_CLOUD', 'Search', ['Home', 'Files', 'Photos', 'Offline', 'Shared', 'Account']],
  ['outlook', 'Outlook', 'com.microsoft.office.outlook', 'third_party', 'ICON_ENVELOPE', 'Search', ['Focused', 'Other', 'Inbox', 'Sent', 'Drafts', 'Calendar']],
  ['teams', 'Teams', 'com.microsoft.teams', 'third_party', 'ICON_PEOPLE', 'Search', ['Activity', 'Chat', 'Teams', 'Calendar', 'Calls', 'Files']],
  ['soundcloud', 'SoundCloud', 'com.soundcloud.android', 'third_party', 'ICON_MUSIC', 'Search', ['Home', 'Feed', 'Library', 'Upload', 'Likes', 'Stations']],
  ['tripadvisor', 'Tripadvisor', 'com.tripadvisor.tripadvisor', 'third_party', 'ICON_STAR', 'Where to?', ['Hotels', 'Things to Do', 'Restaurants', 'Flights', 'Trips', 'Reviews']],
  ['skype', 'Skype', 'com.skype.raider', 'third_party', 'ICON_CALL', 'Search', ['Chats', 'Calls', 'Contacts', 'Notifications', 'Meet Now', 'Profile']],
  ['wish', 'Wish', 'com.contextlogic.wish', 'third_party', 'ICON_SHOPPING_BAG', 'Search', ['Popular', 'Deals', 'Cart', 'Notifications', 'Profile', 'Categories']],
];

/**
 * Icon for the i-th app: shape cycles through the 12 shapes; within one shape the background steps by 5
 * (coprime with 12), so (shape, background) is unique for up to 144 apps. Glyph colour contrasts with it.
 */
function iconFor(i: number): AppIcon {
  const shape = ICON_SHAPES[i % ICON_SHAPES.length]!;
  const k = Math.floor(i / ICON_SHAPES.length);
  const background = ICON_BACKGROUNDS[(i + 5 * k) % ICON_BACKGROUNDS.length]!;
  const glyphs = LIGHT_BACKGROUNDS.has(background) ? DARK_GLYPHS : LIGHT_GLYPHS;
  return { background, shape, glyph: glyphs[k % glyphs.length]! };
}

function aliasesFor(name: string): string[] {
  const lower = name.toLowerCase();
  return [name, `the ${name} app`, `${lower} app`, lower];
}

export const APPS: readonly AppInfo[] = TABLE.map(([id, name, pkg, kind, iconType, search, rows], i) => ({
  id,
  name,
  aliases: aliasesFor(name),
  package: pkg,
  kind,
  icon: iconFor(i),
  iconType,
  ...(search ? { search } : {}),
  rows,
}));

const BY_ID = new Map(APPS.map((a) => [a.id, a]));

export function appById(id: string): AppInfo {
  const app = BY_ID.get(id);
  if (!app) throw new RangeError(`unknown synthetic app '${id}'`);
  return app;
}

/** Apps every synthetic phone has (system and Google apps). */
export const PREINSTALLED: readonly AppInfo[] = APPS.filter((a) => a.kind !== 'third_party');
/** Apps the Play Store offers; some are installed per episode, the others are install targets. */
export const STORE_APPS: readonly AppInfo[] = APPS.filter((a) => a.kind === 'third_party');

/**
 * The held-out apps of the "unseen apps" split: 14 of the 68 apps (54 stay seen). Sets made with
 * `apps: 'seen'` never show them, by name or icon, anywhere; `apps: 'unseen'` sets make every goal's
 * target one of them, so a model trained on seen sets meets their names and icons for the first time.
 * - 10 of the 40 third-party apps: every 4th in table order, starting with the third (Netflix).
 * - 4 of the 28 preinstalled apps, so google_apps has unseen open-app targets: Calculator, Keep Notes,
 *   Fit and Recorder. Not the apps the oracle routes through on every phone (Settings, Chrome,
 *   Play Store, Google), not the dock's apps (world.ts), and none whose name is also ordinary screen
 *   text (Calendar, Contacts, Files, Photos, Translate, News, Podcasts appear in other apps' rows or
 *   suggestions).
 * No unseen name is a shop site, a web-result site or a product query either (content.ts, goals.ts);
 * tests/synth-unseen.test.ts checks that no unseen name or icon reaches a seen set.
 */
export const UNSEEN_APP_IDS: readonly string[] = [
  'calculator',
  'keep',
  'fit',
  'recorder',
  'netflix',
  'tiktok',
  'uber',
  'pinterest',
  'waze',
  'audible',
  'expedia',
  'etsy',
  'outlook',
  'skype',
];

/** Which apps a synthetic set is built around (see UNSEEN_APP_IDS). */
export const APP_SPLITS = ['seen', 'unseen'] as const;
export type AppSplit = (typeof APP_SPLITS)[number];

const UNSEEN = new Set(UNSEEN_APP_IDS);

/** Whether the app belongs to the split: goals of a set of that split may name it as their target. */
export function inAppSplit(app: AppInfo, split: AppSplit): boolean {
  return UNSEEN.has(app.id) === (split === 'unseen');
}

/** Apps a phone may show: seen phones only seen apps; unseen-split phones any app (seen ones act as distractors). */
export function phoneApps(split: AppSplit): readonly AppInfo[] {
  return split === 'seen' ? APPS.filter((a) => inAppSplit(a, 'seen')) : APPS;
}

/** Activity names, AITW's `current_activity`. */
export const LAUNCHER_ACTIVITY = 'com.google.android.apps.nexuslauncher/.NexusLauncherActivity';
export function activityOf(app: AppInfo, screen = 'MainActivity'): string {
  return `${app.package}/.${screen}`;
}

/** Shopping web sites for the web_shopping subset. */
export interface ShopSite {
  id: string;
  domain: string;
  /** Brand name as the site header shows it. */
  brand: string;
  colour: string;
  text: string;
}
export const SHOP_SITES: readonly ShopSite[] = [
  { id: 'amazon', domain: 'amazon.com', brand: 'amazon', colour: '#232f3e', text: '#ff9900' },
  { id: 'ebay', domain: 'ebay.com', brand: 'ebay', colour: '#ffffff', text: '#e53238' },
  { id: 'walmart', domain: 'walmart.com', brand: 'Walmart', colour: '#0071ce', text: '#ffc220' },
  { id: 'bestbuy', domain: 'bestbuy.com', brand: 'BEST BUY', colour: '#0046be', text: '#fff200' },
  { id: 'target', domain: 'target.com', brand: 'target', colour: '#cc0000', text: '#ffffff' },
  { id: 'newegg', domain: 'newegg.com', brand: 'newegg', colour: '#1a1a2e', text: '#f7a01c' },
  { id: 'costco', domain: 'costco.com', brand: 'COSTCO', colour: '#e31837', text: '#ffffff' },
];
