import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ThrottlingModule } from '../../common/throttling/throttling.module';
import { ApiKeyEntity } from './api-key.entity';
import { ApiKeyUsageRecorder } from './api-key-usage.recorder';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysRepository } from './api-keys.repository';
import { ApiKeysService } from './api-keys.service';
import { KeyChanges } from './key-changes';

@Module({
  imports: [TypeOrmModule.forFeature([ApiKeyEntity]), ThrottlingModule],
  controllers: [ApiKeysController],
  providers: [ApiKeysService, ApiKeysRepository, ApiKeyUsageRecorder, KeyChanges],
  exports: [ApiKeysService],
})
export class ApiKeysModule {}
