import { readFileSync } from 'node:fs';
import { configurationTable, CONFIG_VARIABLES } from '@filing/platform';
import { README, withTable } from '../../scripts/config-table';

describe("README's configuration table", () => {
  it('is the one the declared variables produce (npm run docs:config writes it)', () => {
    const readme = readFileSync(README, 'utf8');
    expect(readme).toEqual(withTable(readme, configurationTable()));
  });

  it('has a row for every declared variable', () => {
    const table = configurationTable();
    for (const name of Object.keys(CONFIG_VARIABLES)) expect(table).toContain(`\`${name}\``);
  });
});
