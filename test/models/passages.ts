/** One blog-like passage and the question a reader might type to find it. */
export interface PassageWithQuery {
	id: string;
	lang: 'en' | 'ja';
	passage: string;
	query: string;
}

/**
 * English and Japanese passages on distinct topics. Each query shares a few content words with its own
 * passage but is never a copy of it, so ranking them exercises retrieval rather than string matching.
 */
export const PASSAGES: readonly PassageWithQuery[] = [
	{
		id: 'en-install-node',
		lang: 'en',
		passage:
			'To install Node.js on Linux, download the LTS release from the official website or use a version manager such as nvm. When the install finishes, open a terminal and run node --version to check that everything works.',
		query: 'How do I install Node and check which version I have?',
	},
	{
		id: 'en-astro-routing',
		lang: 'en',
		passage:
			'Astro uses file-based routing: every file in the src/pages folder becomes a page of your site. Dynamic routes put brackets in the file name, and getStaticPaths tells Astro which pages to build.',
		query: 'How does Astro routing map each file to a page?',
	},
	{
		id: 'en-docker-volumes',
		lang: 'en',
		passage:
			'A Docker container loses its data when it is removed, so store files in a volume instead. A named volume is managed by Docker and can be mounted into several containers at the same path.',
		query: 'How can a Docker volume keep my container data?',
	},
	{
		id: 'en-cook-rice',
		lang: 'en',
		passage:
			'To cook rice on the stove, rinse it until the water runs clear, then add about one and a half cups of water for each cup of rice. Bring it to a boil, cover the pot and let it simmer for fifteen minutes.',
		query: 'How much water do I need to cook rice?',
	},
	{
		id: 'en-git-branches',
		lang: 'en',
		passage:
			'A git branch lets you work on a feature without touching the main branch. When the work is done, open a pull request, ask a teammate to review the changes and merge the branch back.',
		query: 'When should I merge my git branch?',
	},
	{
		id: 'en-css-grid',
		lang: 'en',
		passage:
			'CSS grid makes it easy to build a layout with rows and columns. Set display: grid on the parent element and describe the columns with grid-template-columns, for example three equal columns.',
		query: 'How do I make a layout with columns in CSS grid?',
	},
	{
		id: 'en-running',
		lang: 'en',
		passage:
			'Running three times a week is good for your heart and helps you sleep better. Beginners should start with short, slow runs and add a few minutes every week so the legs have time to adapt.',
		query: 'How many times a week should a beginner go running?',
	},
	{
		id: 'en-pour-over-coffee',
		lang: 'en',
		passage:
			'For a good pour-over coffee, grind the beans just before brewing and use water slightly below boiling. Pour slowly in small circles and wait about three minutes for the coffee to drip through.',
		query: 'How should I grind beans for pour-over coffee?',
	},
	{
		id: 'en-houseplants',
		lang: 'en',
		passage:
			'Most houseplants die from too much water, not too little. Push a finger into the soil and water the plant only when the top layer feels dry, and make sure the pot has a drainage hole.',
		query: 'Should I water my houseplants when the soil is dry?',
	},
	{
		id: 'en-passwords',
		lang: 'en',
		passage:
			'Use a password manager to create a long, unique password for every account, and turn on two-factor authentication so that a stolen password alone cannot unlock your account.',
		query: 'Should I use a password manager for each account?',
	},
	{
		id: 'en-kyoto-trip',
		lang: 'en',
		passage:
			'Kyoto is busiest in spring and autumn, so book your hotel early. Buy a bus day pass to visit the temples, and arrive at famous shrines early in the morning to avoid the crowds.',
		query: 'When should I visit the temples in Kyoto to avoid crowds?',
	},
	{
		id: 'en-typescript-strict',
		lang: 'en',
		passage:
			'TypeScript checks your code before it runs. Add type annotations to function parameters and let the compiler infer the rest; turning on strict mode catches even more errors.',
		query: 'What does strict mode in the TypeScript compiler catch?',
	},
	{
		id: 'ja-tokyo-weather',
		lang: 'ja',
		passage:
			'今週の東京の天気は、前半は晴れて気温が高くなりますが、週末は雨の予報です。出かけるときは傘を持って行きましょう。',
		query: '週末の東京の天気は雨ですか？',
	},
	{
		id: 'ja-keigo',
		lang: 'ja',
		passage:
			'日本語の敬語には尊敬語、謙譲語、丁寧語の三つがあります。目上の人と話すときは、相手の動作に尊敬語を使います。',
		query: '尊敬語と謙譲語の違いは何ですか？',
	},
	{
		id: 'ja-cook-rice',
		lang: 'ja',
		passage:
			'おいしいご飯を炊くには、米をやさしく洗い、三十分ほど水に浸してから炊飯器のスイッチを入れます。炊けたら十分ほど蒸らしてください。',
		query: '炊飯器でご飯をおいしく炊くには？',
	},
	{
		id: 'ja-hanami',
		lang: 'ja',
		passage:
			'春になると公園の桜が満開になり、多くの人が花見を楽しみます。人気の公園では朝早くから場所取りが始まります。',
		query: '桜の花見におすすめの公園は？',
	},
	{
		id: 'ja-shinkansen',
		lang: 'ja',
		passage:
			'東京から大阪までは新幹線で約二時間半です。指定席は駅の窓口やアプリで予約でき、混雑する連休は早めの予約がおすすめです。',
		query: '新幹線の指定席はどこで予約できますか？',
	},
	{
		id: 'ja-onsen',
		lang: 'ja',
		passage:
			'温泉に入る前には体を洗い、タオルを湯船に入れないのがマナーです。長く入りすぎると疲れるので、十分ほどで休憩しましょう。',
		query: '温泉に入るときのマナーは？',
	},
	{
		id: 'ja-sleep',
		lang: 'ja',
		passage:
			'よく眠るためには、寝る一時間前からスマートフォンを見ないことが大切です。毎日同じ時間に起きると、体のリズムが整います。',
		query: 'ぐっすり眠るには、寝る前の時間をどう過ごす？',
	},
	{
		id: 'ja-cat-care',
		lang: 'ja',
		passage:
			'猫を飼うときは、新鮮な水と決まった時間の食事を用意しましょう。トイレは毎日掃除して、静かな場所に置きます。',
		query: '猫の食事とトイレ掃除はどうする？',
	},
	{
		id: 'ja-earthquake',
		lang: 'ja',
		passage:
			'地震に備えて、三日分の水と食料、懐中電灯を用意しておきましょう。家具は壁に固定し、避難場所を家族で確認します。',
		query: '地震の避難と備えに何を用意する？',
	},
	{
		id: 'ja-english-study',
		lang: 'ja',
		passage:
			'英語を上達させるには、毎日少しずつ音読するのが効果的です。好きな映画を字幕付きで見るのも、聞く力を伸ばす良い方法です。',
		query: '字幕付きの映画で聞く力は伸びる？',
	},
	{
		id: 'ja-kyoto-temples',
		lang: 'ja',
		passage:
			'京都には千年以上の歴史を持つ寺や神社がたくさんあります。秋の紅葉の時期は観光客が多いので、朝早く訪れるのがおすすめです。',
		query: '秋に京都の寺を観光するコツは？',
	},
	{
		id: 'ja-saving-money',
		lang: 'ja',
		passage:
			'毎月の給料から先に一定の金額を貯金用の口座に移すと、無理なくお金を貯められます。家計簿アプリで支出を記録するのも効果的です。',
		query: '毎月お金を貯金するコツは？',
	},
];
